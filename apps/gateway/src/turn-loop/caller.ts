import { SessionIdSchema, type KeyIdentity } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';
import type { Caller } from '../tools/server-tool.js';

/**
 * The caller of a request: the key identity the auth guard verified (account = sandbox tenant,
 * tool level, plan). No identity, no tools and no files: there is no anonymous account.
 */
// The second parameter is ignored: it was the anonymous fallback's config, kept so callers compile.
export function callerOf(identity: Pick<KeyIdentity, 'account_id' | 'tool_level' | 'plan'> | undefined, _unused?: unknown): Caller {
  if (!identity) throw new ApiError('missing_api_key', 'You didn\'t provide an API key. Use "Authorization: Bearer drael_...".');
  return { account_id: identity.account_id, tool_level: identity.tool_level, plan: identity.plan };
}

export const SESSION_HEADER = 'x-drael-session';

/** X-Drael-Session: the sandbox session of this request, or undefined (the request gets a workspace of its own, sessions/workspace.ts). */
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
