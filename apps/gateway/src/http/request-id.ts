import type { IncomingMessage } from 'node:http';
import { acceptedRequestId, newRequestId } from '@drael/logger';

/** The request id: the caller's x-request-id when acceptable (@drael/logger's rule), a new UUID otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  return acceptedRequestId(req.headers['x-request-id']) ?? newRequestId();
}
