import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { ApiError } from '../errors/api-error.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';

export interface UpstreamTarget {
  /** e.g. http://127.0.0.1:11434/v1 (no trailing slash) */
  readonly base_url: string;
  readonly api_key: string;
}

export interface UpstreamCall {
  readonly path: string;
  readonly body: string | Buffer;
  readonly requestId: string;
  readonly signal: AbortSignal;
  readonly accept?: string;
}

export type UpstreamResponse = Dispatcher.ResponseData;

/**
 * The only place that speaks HTTP to model upstreams: one keep-alive undici Pool per upstream
 * origin, so a request reuses a warm connection instead of paying a TCP handshake each time.
 * Transport failures leave as typed ApiErrors (unreachable → 502, no headers in time → 504).
 */
@Injectable()
export class UpstreamClient implements OnApplicationShutdown {
  private readonly pools = new Map<string, Pool>();

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  async post(target: UpstreamTarget, call: UpstreamCall): Promise<UpstreamResponse> {
    const { origin, path } = this.endpointOf(target.base_url, call.path);
    const headers = headersFor(target, call);
    try {
      return await this.poolFor(origin).request({
        method: 'POST',
        path,
        headers,
        body: call.body,
        signal: call.signal,
      });
    } catch (err) {
      throw upstreamFailure(err, origin) ?? err;
    }
  }

  /**
   * The proxy's hot path: undici's raw dispatch, whose handler gets each body chunk as it is read
   * (no Readable, no AbortController, no async-resource hop per callback). The handler's
   * controller pauses/resumes the upstream for backpressure and aborts it when the client leaves.
   */
  dispatch(target: UpstreamTarget, call: Omit<UpstreamCall, 'signal'>, handler: Dispatcher.DispatchHandler): void {
    const { origin, path } = this.endpointOf(target.base_url, call.path);
    const headers = headersFor(target, call);
    this.poolFor(origin).dispatch({ method: 'POST', path, headers, body: call.body }, handler);
  }

  // Parsing the same base URL on every request showed up in profiles.
  private readonly endpoints = new Map<string, { origin: string; path: string }>();
  private endpointOf(baseUrl: string, path: string): { origin: string; path: string } {
    const key = baseUrl + path;
    let endpoint = this.endpoints.get(key);
    if (!endpoint) {
      const url = new URL(key);
      endpoint = { origin: url.origin, path: url.pathname + url.search };
      this.endpoints.set(key, endpoint);
    }
    return endpoint;
  }

  private poolFor(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: this.config.UPSTREAM_CONNECTIONS,
        headersTimeout: this.config.UPSTREAM_HEADERS_TIMEOUT_MS,
        bodyTimeout: this.config.UPSTREAM_BODY_TIMEOUT_MS,
        keepAliveTimeout: 30_000,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
  }
}

/** Maps an undici/transport failure to the client-facing error, or undefined if it is not one. */
export function upstreamFailure(err: unknown, origin = 'the upstream'): ApiError | undefined {
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new ApiError('upstream_timeout', `The model upstream did not answer in time (${origin})`);
  }
  if (err instanceof undiciErrors.RequestAbortedError || (err as { name?: string }).name === 'AbortError') return undefined;
  const code = (err as { code?: string }).code ?? '';
  if (
    err instanceof undiciErrors.SocketError ||
    err instanceof undiciErrors.ConnectTimeoutError ||
    ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_CLOSED'].includes(code)
  ) {
    return new ApiError('upstream_unreachable', `The model upstream could not be reached (${origin}): ${code || (err as Error).message}`);
  }
  return undefined;
}

/** What every upstream call sends: JSON in, the answer kind asked for, the request id, the alias's key. */
function headersFor(target: UpstreamTarget, call: Pick<UpstreamCall, 'accept' | 'requestId'>): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: call.accept ?? 'application/json, text/event-stream',
    'x-request-id': call.requestId,
  };
  if (target.api_key) headers.authorization = `Bearer ${target.api_key}`;
  return headers;
}
