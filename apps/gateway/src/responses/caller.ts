import type { FastifyRequest } from 'fastify';
import { KeyIdentitySchema } from '@drael/contracts';
import type { Caller } from './response-loop.service.js';

/**
 * Who is calling: the key identity the gateway's auth guard attached to the request (account,
 * tool level). Stored responses are scoped to its account. A gateway running without the auth
 * guard (local bring-up before keys exist) serves one anonymous account at the highest level.
 */
export function callerOf(req: FastifyRequest): Caller {
  const r = req as FastifyRequest & { identity?: unknown; keyIdentity?: unknown; drael?: { identity?: unknown } };
  for (const candidate of [r.identity, r.keyIdentity, r.drael?.identity]) {
    const parsed = KeyIdentitySchema.pick({ account_id: true, tool_level: true }).safeParse(candidate);
    if (parsed.success) return parsed.data;
  }
  return ANONYMOUS;
}

export const ANONYMOUS: Caller = { account_id: 'anonymous', tool_level: 'l4_browser' };
