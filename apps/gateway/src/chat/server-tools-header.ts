import { ApiError } from '../errors/api-error.js';

export const SERVER_TOOLS_HEADER = 'x-drael-server-tools';

// spec/README: `1` asks for Drael's catalogue (the default), `0` for a plain proxied completion.
// The usual spellings of a boolean header mean the same, in any case.
const ON = new Set(['1', 'true', 'on', 'yes']);
const OFF = new Set(['0', 'false', 'off', 'no']);

/**
 * Whether a chat completion without client tools gets the server-side catalogue: true unless
 * `x-drael-server-tools` turns it off. Any other value is a 400 naming the header, never a guess
 * (`false` once counted as on).
 */
export function serverToolsWanted(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  const raw = headers[SERVER_TOOLS_HEADER];
  if (raw === undefined) return true;
  const value = (Array.isArray(raw) ? raw.join(',') : raw).trim().toLowerCase();
  if (ON.has(value)) return true;
  if (OFF.has(value)) return false;
  throw new ApiError(
    'invalid_request',
    `Invalid ${SERVER_TOOLS_HEADER} header: expected 1 (server-side tools, the default) or 0 (a plain completion); true/false, on/off and yes/no are accepted too`,
    SERVER_TOOLS_HEADER,
  );
}
