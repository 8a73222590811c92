import type { FastifyInstance } from 'fastify';
import { transportError } from '../errors/error-response.js';
import type { ApiError } from '../errors/api-error.js';

/**
 * Which methods a path is served with: the one definition behind a 405's `Allow` and a CORS
 * preflight's `Access-Control-Allow-Methods`. Asked of Fastify's own router (findRoute matches a
 * concrete path, percent-decoding and all, as a request would be routed), once per method the
 * gateway registers, so the answer cannot drift from the routes. The hot routes (hot-route.ts)
 * each have the Fastify route of the same method and path (checked at boot), so they are in it.
 */
export class RouteMethods {
  private methods: readonly string[] = [];

  constructor(private readonly fastify: FastifyInstance) {}

  /** The methods registered (GET's HEAD included), once every route is: Allow lists them in this order. */
  register(methods: Iterable<string>): void {
    const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
    this.methods = [...new Set(methods)].sort((a, b) => rank(order, a) - rank(order, b) || a.localeCompare(b));
  }

  /** The methods `url` (path and query, as sent) is served with; empty for an unknown path. */
  allowedFor(url: string): string[] {
    // The router takes the path alone; a query string would be part of the last segment.
    const path = url.split('?', 1)[0]!;
    return this.methods.filter((method) => this.fastify.findRoute({ method, url: path }) !== null);
  }

  /** The answer to a request no route of its method matches: 405 naming what the path takes, or 404. */
  refusalFor(method: string, url: string): ApiError | undefined {
    const allowed = this.allowedFor(url);
    if (allowed.length === 0) return undefined;
    // RFC 9110 §15.5.6: a 405 carries Allow, the methods the target does support.
    const error = transportError(405, 'method_not_allowed', `${method} ${url.split('?', 1)[0]} is not served; this path takes ${allowed.join(', ')}.`);
    error.headers = { ...error.headers, allow: allowed.join(', ') };
    return error;
  }
}

function rank(order: readonly string[], method: string): number {
  const i = order.indexOf(method);
  return i === -1 ? order.length : i;
}
