import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { transportError } from '../errors/error-response.js';
import { checkRouteInput } from '../http/request-input.js';
import { lingerIfBodyUnread } from '../http/lingering-close.js';
import type { AdminToken } from './admin-token.js';
import type { KeyGate } from './key-gate.service.js';
import { accessOf, type RouteAccess } from './route-access.js';

/** One route as Fastify registered it, and who may call it. */
export interface RouteEntry {
  readonly method: string;
  readonly url: string;
  readonly access: RouteAccess;
}

export interface RouteAccessDeps {
  readonly gate: KeyGate;
  readonly admin: AdminToken;
}

/**
 * Gives every route Fastify registers from now on its own first onRequest hook, built from the
 * access its declaration marks (fail closed: unmarked means a key). It runs once Fastify has
 * matched the route on the decoded path, so the decision follows the route that will serve the
 * request, never the raw URL, and before the body is read (the content-type parser runs after
 * onRequest): a request without a valid key is answered 401 with its body unread. Then the edge's
 * checks of what the route will be handed: Content-Encoding, path parameters, query values.
 * Returns the routes as they are registered (logged at boot, asserted by the tests).
 */
// Identity only: which hooks are ours.
const accessHooks = new WeakSet<object>();

export function registerRouteAccess(fastify: FastifyInstance, deps: RouteAccessDeps): RouteEntry[] {
  const routes: RouteEntry[] = [];
  fastify.addHook('onRoute', (route) => {
    const access = accessOf(route.config);
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, access });
    const own = route.onRequest ? [route.onRequest].flat() : [];
    // Fastify derives each GET's HEAD route from the GET's options, hooks included: one is enough.
    if (own.some((hook) => accessHooks.has(hook))) return;
    const hook = accessHook(access, deps);
    accessHooks.add(hook);
    route.onRequest = [hook, ...own];
  });
  return routes;
}

function accessHook(access: RouteAccess, { gate, admin }: RouteAccessDeps): onRequestHookHandler {
  if (access === 'public') return (req, _reply, done) => checkInput(req, done);
  if (access === 'admin') {
    return (req, reply, done) => {
      try {
        admin.check(req.headers);
      } catch (err) {
        return refuseUnread(req, reply, done, err);
      }
      checkInput(req, done);
    };
  }
  return (req, reply, done) => {
    let identity;
    try {
      // A cached key with rate-limit budget leased: admitted without a promise (most requests).
      identity = gate.admitNow(req.headers, reply.raw);
    } catch (err) {
      return refuseUnread(req, reply, done, err);
    }
    if (identity) {
      req.identity = identity;
      return checkInput(req, done);
    }
    gate.admit(req.headers, reply.raw).then(
      (admitted) => {
        req.identity = admitted;
        checkInput(req, done);
      },
      (err: unknown) => refuseUnread(req, reply, done, err),
    );
  };
}

function checkInput(req: FastifyRequest, done: HookHandlerDoneFunction): void {
  try {
    checkContentEncoding(req.headers);
    checkRouteInput(req.params, req.query);
  } catch (err) {
    return done(err as Error);
  }
  done();
}

/** Bodies arrive as sent: a compressed one cannot be parsed, and inflating it is a bomb waiting. */
function checkContentEncoding(headers: IncomingHttpHeaders): void {
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw transportError(415, 'unsupported_content_encoding', 'Content-Encoding is not supported: send the body uncompressed.');
  }
}

/**
 * A refused request's body is never read; the connection is closed after the answer rather than
 * drained for the next request, so an unread upload costs nothing more (the close lingers so the
 * client still reads the answer: lingering-close.ts).
 */
export function refuseUnread(req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, err: unknown): void {
  if (lingerIfBodyUnread(req.raw)) void reply.header('connection', 'close');
  done(err as Error);
}
