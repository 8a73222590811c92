import { isSessionId, SESSION_ID_RULE } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';

export const SESSION_HEADER = 'x-drael-session';

/** X-Drael-Session: the sandbox session of this request, or undefined (the request gets a workspace of its own, workspace.ts). */
export function sessionOf(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const raw = headers[SESSION_HEADER];
  if (raw === undefined) return undefined;
  return checkSessionId(Array.isArray(raw) ? (raw[0] ?? '') : raw, 'X-Drael-Session');
}

/** A session id a client sent (header, path, cursor), held to the contracts' one rule; a 400 naming `param` otherwise. */
export function checkSessionId(id: string, param: string): string {
  if (!isSessionId(id)) throw new ApiError('invalid_session', `${param} must match ${SESSION_ID_RULE}`, param);
  return id;
}
