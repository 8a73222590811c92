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

/** The caller's identity; only on routes behind the key guard. */
export function identityOf(req: FastifyRequest): KeyIdentity {
  if (!req.identity) throw new ApiError('missing_api_key', 'You didn\'t provide an API key. Use "Authorization: Bearer drael_...".');
  return req.identity;
}

/** `@CallerIdentity() id: KeyIdentity` in a controller method. */
export const CallerIdentity = createParamDecorator((_data: unknown, ctx: ExecutionContext) =>
  identityOf(ctx.switchToHttp().getRequest<FastifyRequest>()),
);
