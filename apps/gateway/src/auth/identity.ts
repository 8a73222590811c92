import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { KeyIdentity } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller: account, key, tool level, plan and limits (set by the route access hook). */
    identity?: KeyIdentity;
  }
}

/**
 * Who is calling, as the features see it: the account (the sandbox tenant and the owner of stored
 * responses and sessions), the key's tool level and its plan. There is no anonymous caller: no
 * identity, no tools, no files.
 */
export type Caller = Pick<KeyIdentity, 'account_id' | 'tool_level' | 'plan'>;

/**
 * This request's key checked again later in the request (each turn and each batch of tool calls
 * of a server-side loop, each poll of a run-event stream): throws `invalid_api_key` once the key
 * has been revoked, so a long request stops within AUTH_CACHE_TTL_MS of a revocation, as a new
 * request would be refused. KeyGate.recheckOf makes one.
 */
export type KeyRecheck = () => Promise<void>;

/** The one answer to a request that brings no key (KeyGate, the hot routes and every controller). */
export function missingApiKey(): ApiError {
  return new ApiError(
    'missing_api_key',
    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
  );
}

/** The caller's identity; only on routes behind the key guard. */
export function identityOf(req: FastifyRequest): KeyIdentity {
  if (!req.identity) throw missingApiKey();
  return req.identity;
}

/** The caller of a verified identity (only what features may read of it). */
export function callerOf(identity: Caller): Caller {
  return { account_id: identity.account_id, tool_level: identity.tool_level, plan: identity.plan };
}

/** `@CallerIdentity() id: KeyIdentity` in a controller method: the whole identity (agents, billing). */
export const CallerIdentity = createParamDecorator((_data: unknown, ctx: ExecutionContext) => identityOf(ctx.switchToHttp().getRequest<FastifyRequest>()));

/** `@RequestCaller() caller: Caller` in a controller method: account, tool level, plan. */
export const RequestCaller = createParamDecorator((_data: unknown, ctx: ExecutionContext) => callerOf(identityOf(ctx.switchToHttp().getRequest<FastifyRequest>())));
