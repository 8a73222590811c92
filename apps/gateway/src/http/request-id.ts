import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// A caller's id is kept only if it is short and printable, so it cannot bloat or forge log lines.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id: the caller's x-request-id when acceptable, a new UUID otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && ACCEPTABLE_ID.test(given) ? given : randomUUID();
}
