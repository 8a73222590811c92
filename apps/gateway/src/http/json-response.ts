import type { ServerResponse } from 'node:http';

/**
 * A JSON answer in one writeHead, with the headers Fastify gives a Nest route's object; `head`
 * carries the headers collected for this answer (request id, rate limits) and gets the body's.
 * Used for hot-route answers and for every error envelope.
 */
export function writeJsonResponse(res: ServerResponse, status: number, value: unknown, head: Record<string, string | number>): void {
  if (res.destroyed) return;
  const body = JSON.stringify(value);
  head['content-type'] = 'application/json; charset=utf-8';
  head['content-length'] = Buffer.byteLength(body);
  res.writeHead(status, head);
  res.end(body);
}
