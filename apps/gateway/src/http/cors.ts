import type { IncomingMessage, ServerResponse } from 'node:http';
import { transportError, writeErrorResponse } from '../errors/error-response.js';
import { requestIdOf } from './request-id.js';
import type { RouteMethods } from './route-methods.js';
import { RATE_LIMIT_HEADER_NAMES } from '../rate-limit/rate-limit-headers.js';

/**
 * CORS for browser apps (Fetch standard, "CORS protocol"), fail closed: with no allowlist
 * (CORS_ALLOWED_ORIGINS, http.config.ts) no answer carries an Access-Control-* header and a
 * preflight is answered like any other OPTIONS request (405), so a browser refuses every
 * cross-origin call. With one, a listed origin (exact match, as the browser sends it) gets its
 * preflight answered and its answers readable; any other origin is treated as if CORS were off.
 *
 * Runs ahead of the hot routes and Fastify (bootstrap.ts), so a preflight (which carries no key)
 * never meets the key check, and every answer, JSON, SSE stream or error envelope alike, gets the
 * headers: they are set on the response before anything writes its head.
 */
export class CorsPolicy {
  constructor(
    private readonly origins: ReadonlySet<string>,
    private readonly routes: RouteMethods,
  ) {}

  /**
   * A preflight from a listed origin is answered here: 204 with what the path allows, or 403 when
   * it asks for a method or header the gateway does not take (the browser then refuses the call,
   * and the 403 says why to whoever reads the network panel). When answered, the answer's request
   * id (for its access line); undefined when the request is not such a preflight.
   */
  answerPreflight(req: IncomingMessage, res: ServerResponse): string | undefined {
    const origin = req.headers.origin;
    const requested = req.headers['access-control-request-method'];
    if (req.method !== 'OPTIONS' || origin === undefined || requested === undefined || !this.origins.has(origin)) return undefined;
    const methods = this.routes.allowedFor(req.url ?? '/');
    // An unknown path: its 404, without CORS headers.
    if (methods.length === 0) return undefined;
    const requestId = requestIdOf(req);
    const headers = (req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    const refused = methods.includes(requested) ? headers.find((h) => !isRequestHeaderAllowed(h)) : `method ${requested}`;
    if (refused !== undefined) {
      const error = transportError(403, 'cors_request_not_allowed', `CORS preflight refused: ${refused.slice(0, 100)} is not allowed on ${(req.url ?? '/').split('?', 1)[0]}.`);
      writeErrorResponse(res, error, requestId, { vary: VARY });
      return requestId;
    }
    res.writeHead(204, {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': methods.join(', '),
      ...(headers.length > 0 ? { 'access-control-allow-headers': headers.join(', ') } : {}),
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
      vary: VARY,
      'x-request-id': requestId,
    });
    res.end();
    return requestId;
  }

  /** An actual request from a listed origin: its answer may be read by the page. */
  allowAnswer(req: IncomingMessage, res: ServerResponse): void {
    const origin = req.headers.origin;
    if (origin === undefined || !this.origins.has(origin)) return;
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    // The answer depends on the Origin: a shared cache must not serve it to another one.
    res.setHeader('vary', 'Origin');
  }
}

const VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';

// Chrome caps a preflight's cache at 2 hours (Firefox at 24): this is the most that holds everywhere,
// so a browser app asks once per route and origin every 2 hours rather than before each call.
const PREFLIGHT_MAX_AGE_S = 7_200;

// What the OpenAI SDKs and Drael's own clients send: the key, the body's type, OpenAI's and
// Stainless's (the SDK generator's) headers, Drael's request options. Anything else is refused.
const ALLOWED_REQUEST_HEADER =
  /^(?:authorization|content-type|accept|idempotency-key|last-event-id|x-request-id|x-api-key|openai-[a-z0-9-]+|x-stainless-[a-z0-9-]+|x-drael-[a-z0-9-]+)$/;

function isRequestHeaderAllowed(name: string): boolean {
  return ALLOWED_REQUEST_HEADER.test(name);
}

// Headers a page may read beyond the CORS-safelisted ones: the ones the SDKs act on (the request
// id in errors, the rate limits and Retry-After for backoff) and Drael's own.
const EXPOSED_HEADERS = ['x-request-id', ...RATE_LIMIT_HEADER_NAMES, 'x-drael-upstream', 'x-drael-file-size'].join(', ');
