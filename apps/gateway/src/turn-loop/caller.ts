import { SessionIdSchema, type KeyIdentity } from '@drael/contracts';
import type { GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import type { Caller } from '../tools/server-tool.js';

/**
 * The caller of a request: the key identity the auth guard verified (account = sandbox tenant,
 * tool level, plan). Until a guard puts one on the request, requests run as the configured
 * anonymous account and tool level: the one seam auth plugs into.
 */
export function callerOf(identity: Pick<KeyIdentity, 'account_id' | 'tool_level' | 'plan'> | undefined, config: GatewayConfig): Caller {
  if (identity) return { account_id: identity.account_id, tool_level: identity.tool_level, plan: identity.plan };
  return { account_id: config.DRAEL_ANONYMOUS_ACCOUNT, tool_level: config.DRAEL_ANONYMOUS_TOOL_LEVEL, plan: config.DRAEL_ANONYMOUS_PLAN };
}

export const SESSION_HEADER = 'x-drael-session';

/** X-Drael-Session: the sandbox session of this request, or undefined (a workspace per run, kept nowhere). */
export function sessionOf(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const raw = headers[SESSION_HEADER];
  if (raw === undefined) return undefined;
  return checkSessionId(Array.isArray(raw) ? (raw[0] ?? '') : raw, 'X-Drael-Session');
}

export function checkSessionId(id: string, param: string): string {
  if (!SessionIdSchema.safeParse(id).success) {
    throw new ApiError('invalid_session', `${param} must match ^[A-Za-z0-9_-]{1,64}$`, param);
  }
  return id;
}

/** The identity the auth guard put on the request, if any. */
export function identityOf(req: object): Pick<KeyIdentity, 'account_id' | 'tool_level' | 'plan'> | undefined {
  return (req as { identity?: KeyIdentity }).identity;
}
