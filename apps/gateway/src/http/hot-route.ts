import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { withRequestId, type AccessLog, type Logger } from '@drael/logger';
import { currentTraceId } from '@drael/tracing';
import type { KeyIdentity } from '@drael/contracts';
import type { KeyGate } from '../auth/key-gate.service.js';
import { apiErrorOf, logServerError, writeErrorResponse } from '../errors/error-response.js';
import { checkJsonCharset, isPlainJson, readJsonBody } from './json-body.parser.js';
import { requestIdOf } from './request-id.js';
import { lingerIfBodyUnread } from './lingering-close.js';
import { recordHttpRequest } from '../metrics/gateway.metrics.js';

/** A route the HTTP server serves itself, ahead of Fastify (bootstrap.ts). */
export interface HotRoute {
  /** The method and path it serves, which Fastify serves too (checked at boot): every rule of the routes (405, CORS) holds for it. */
  readonly method: string;
  readonly path: string;
  matches(req: IncomingMessage): boolean;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** What a keyed JSON POST hands its handler once the key is admitted and the body read. */
export interface HotCall {
  /** The parsed JSON body, unvalidated. */
  readonly body: unknown;
  readonly rawBody: Buffer;
  readonly headers: IncomingHttpHeaders;
  readonly requestId: string;
  readonly res: ServerResponse;
  readonly identity: KeyIdentity;
  /** Headers for the answer's one writeHead (request id, rate limits), not set on `res`. */
  readonly head: Record<string, string>;
}

export interface HotRouteDeps {
  readonly gate: KeyGate;
  readonly logger: Logger;
  readonly accessLog: AccessLog;
  readonly bodyLimit: number;
}

/**
 * A keyed `POST <path>` with a JSON body, served straight from the HTTP server in front of
 * Fastify and Nest. The gateway's busiest routes would otherwise pay Fastify's routing and hooks
 * and Nest's guard, pipe and interceptor chain per request, which measured as a large share of
 * their cost (docs/decisions/0002-gateway-hot-path.md). This does what that chain does, with the
 * same pieces: the request id (x-request-id), KeyGate (key and rate limit, the headers written
 * with the answer's head), the JSON body (same limit and parser), the handler in the request id's
 * context, errors as the OpenAI envelope, one access line. The key is checked before the body is
 * read, as on every keyed route (route-access.hook.ts). Anything else (another path, a query
 * string, another content type, shutdown in progress) goes to Fastify, whose Nest controller
 * serves the same service.
 */
export class KeyedJsonPostRoute implements HotRoute {
  readonly method = 'POST';

  /** `handle` answers the call: writes `res` itself, or throws for the error envelope. */
  constructor(
    readonly path: string,
    private readonly deps: HotRouteDeps,
    private readonly handle: (call: HotCall) => Promise<void>,
  ) {}

  matches(req: IncomingMessage): boolean {
    // Only the canonical spelling of the path: any other (`/%761/...`, `//v1/...`, a query string,
    // a trailing slash) and any Content-Encoding go to Fastify, whose route access hook and checks
    // decide on the route it matches.
    return req.url === this.path && req.method === 'POST' && isPlainJson(req.headers['content-type']) && req.headers['content-encoding'] === undefined;
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { gate, logger, accessLog, bodyLimit } = this.deps;
    const started = performance.now();
    const requestId = requestIdOf(req);
    // The request id and rate-limit headers go into the one writeHead of the answer, not setHeader
    // calls (which put Node's writeHead on its slow merge path).
    const head: Record<string, string> = { 'x-request-id': requestId };
    // Read here, in the request's span: the close event comes outside it.
    const traceId = currentTraceId();
    res.once('close', () => {
      const ms = performance.now() - started;
      accessLog(requestId, 'POST', this.path, res.statusCode, Math.round(ms * 10) / 10, traceId);
      recordHttpRequest(this.path, 'POST', res, ms);
    });
    try {
      // The key before the body: a request without a valid key is answered 401 with its body
      // unread. A cached key with rate-limit budget leased is admitted without a promise (most
      // requests); otherwise the verdict's round trip comes first (once per key per cache period).
      const identity: KeyIdentity = gate.admitNow(req.headers, res, head) ?? (await gate.admitInto(req.headers, res, head));
      // Before the body is read (Fastify's routes check it in their JSON parser, json-body.parser.ts).
      checkJsonCharset(req.headers['content-type']);
      const body = await readJsonBody(req, bodyLimit);
      await withRequestId(requestId, () => this.handle({ body: body.parsed, rawBody: body.raw, headers: req.headers, requestId, res, identity, head }));
    } catch (exception) {
      const error = apiErrorOf(exception);
      withRequestId(requestId, () => logServerError(logger, exception, error));
      // Refused before its body was read (no key, too large): closed after the answer rather
      // than drained for a next request, lingering so the client reads the answer.
      if (lingerIfBodyUnread(req)) head.connection = 'close';
      writeErrorResponse(res, error, requestId, head);
    }
  }
}
