import type { IncomingMessage, ServerResponse } from 'node:http';
import { withRequestId, type AccessLog, type Logger } from '@drael/logger';
import type { KeyIdentity } from '@drael/contracts';
import { KeyGate } from '../auth/key-gate.service.js';
import { apiErrorOf, logServerError, writeErrorResponse } from '../errors/error-response.js';
import { isPlainJson, readJsonBody } from '../http/json-body.parser.js';
import { requestIdOf } from '../http/request-id.js';
import { ChatCompletionsService } from './chat-completions.service.js';

const PATH = '/v1/chat/completions';

/**
 * POST /v1/chat/completions served straight from the HTTP server, in front of Fastify and Nest:
 * the gateway's hot path (every proxied completion) would otherwise pay Fastify's routing and
 * hooks and Nest's guard, pipe and interceptor chain on every request, which profiling put at
 * a large part of the gateway's CPU per request beyond the proxying itself
 * (bench/gateway-passthrough, docs/decisions/0002-gateway-hot-path.md).
 * It does what that chain did, with the same pieces: the request id (x-request-id), KeyGate (key
 * and rate limit, the headers written with the answer's head), the JSON body (same limit and parser),
 * ChatCompletionsService in the request id's context, errors as the OpenAI envelope, one access
 * line. The key check starts as the headers arrive, so its round trip overlaps the body upload.
 * Anything else (another path, a query string, another content type, shutdown in progress) goes
 * to Fastify, whose Nest controller serves the same service.
 */
export class ChatCompletionsRoute {
  constructor(
    private readonly gate: KeyGate,
    private readonly chat: ChatCompletionsService,
    private readonly logger: Logger,
    private readonly accessLog: AccessLog,
    private readonly bodyLimit: number,
  ) {}

  matches(req: IncomingMessage): boolean {
    return req.url === PATH && req.method === 'POST' && isPlainJson(req.headers['content-type']);
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const requestId = requestIdOf(req);
    // The request id and rate-limit headers go into the one writeHead of the answer, not setHeader
    // calls (which put Node's writeHead on its slow merge path).
    const head: Record<string, string> = { 'x-request-id': requestId };
    res.once('close', () => this.accessLog(requestId, 'POST', PATH, res.statusCode, Math.round((performance.now() - started) * 10) / 10));
    try {
      // A cached key with rate-limit budget leased is admitted without a promise (most requests).
      const admittedNow = this.gate.admitNow(req.headers, res, head);
      const admitted = admittedNow ? undefined : this.gate.admitInto(req.headers, res, head);
      // A body error is answered first (as when Fastify parsed the body before the guard ran);
      // the admission's own failure is then seen below, never left unhandled.
      admitted?.catch(() => undefined);
      const body = await readJsonBody(req, this.bodyLimit);
      const identity: KeyIdentity = admittedNow ?? (await admitted!);
      await withRequestId(requestId, () =>
        this.chat.handle({ body: body.parsed, rawBody: body.raw, headers: req.headers, requestId, res, identity, head }),
      );
    } catch (exception) {
      const error = apiErrorOf(exception);
      withRequestId(requestId, () => logServerError(this.logger, exception, error));
      writeErrorResponse(res, error, requestId, head);
    }
  }
}
