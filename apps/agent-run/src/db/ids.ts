import { randomBytes } from 'node:crypto';

/** Opaque, unguessable ids with a readable prefix (agent_…, run_…). */
export function newId(prefix: 'agent' | 'run' | 'rcpt'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
