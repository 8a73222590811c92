import { Inject, Injectable } from '@nestjs/common';
import { fetchCatalog, type FetchPageReply, type FetchToolHttpRequest } from '@drael/contracts';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';
import { ApiError } from '../../errors/api-error.js';
import type { Caller } from '../../auth/identity.js';
import { assertToolAllowed, fetchRenderFor } from '../../tools/tool-levels.js';

/** An ApiError whose envelope also carries the service's details (spec 04: upstream_error has {status, url}). */
export class FetchToolError extends ApiError {
  constructor(
    code: ConstructorParameters<typeof ApiError>[0],
    message: string,
    param: string | null,
    readonly details: Record<string, unknown> | undefined,
  ) {
    super(code, message, param);
  }

  override toEnvelope() {
    const envelope = super.toEnvelope();
    return this.details ? { error: { ...envelope.error, details: this.details } } : envelope;
  }
}

/**
 * POST /v1/tools/fetch over fetch.page.v1. No usage row and no charge (spec 01: web_fetch costs
 * nothing). The key's tool level decides as for catalogue web_fetch: below l1_http refused, the
 * real browser only from l4_browser on (fetchRenderFor); the page is rendered in the account's
 * own browser context (tenant).
 */
@Injectable()
export class FetchToolService {
  constructor(@Inject(NatsRpcClient) private readonly nats: NatsRpcClient) {}

  async fetch(req: FetchToolHttpRequest, caller: Caller): Promise<FetchPageReply> {
    assertToolAllowed(caller.tool_level, 'web_fetch');
    try {
      return await this.nats.request(fetchCatalog.page, {
        url: req.url,
        render: fetchRenderFor(caller.tool_level),
        tenant: caller.account_id,
        ...(req.max_chars !== undefined ? { max_chars: req.max_chars } : {}),
        ...(req.focus !== undefined ? { focus: req.focus } : {}),
        ...(req.offset !== undefined ? { offset: req.offset } : {}),
      });
    } catch (err) {
      if (!isRpcError(err)) throw err;
      switch (err.code) {
        // spec 04: private, loopback and credential-bearing URLs, or non-HTTP schemes, are 400 bad_request.
        case 'blocked_address':
        case 'bad_request':
          throw new FetchToolError('bad_request', err.message, 'url', undefined);
        case 'upstream_error':
          // spec 04: a non-2xx upstream is 502 upstream_error with details: { status, url }.
          throw new FetchToolError('upstream_error', err.message, null, {
            status: err.details?.status,
            url: err.details?.url,
          });
        default:
          throw ApiError.fromRpc(err) ?? err;
      }
    }
  }
}
