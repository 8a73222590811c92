import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';

const rawBodies = new WeakMap<FastifyRequest, Buffer>();

/** The bytes of a JSON body as they arrived, so a proxied request can be forwarded without re-encoding. */
export function rawBodyOf(req: FastifyRequest): Buffer | undefined {
  return rawBodies.get(req);
}

/**
 * JSON bodies are parsed with plain JSON.parse (the payload is forwarded, never merged into an
 * object of ours, so prototype-poisoning keys are inert) and the raw bytes kept; malformed JSON
 * is the typed `invalid_json` error.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parse = (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const buf = body as Buffer;
    if (buf.length === 0) return done(new ApiError('invalid_json', 'Request body is empty; expected JSON'), undefined);
    try {
      const parsed: unknown = JSON.parse(buf.toString('utf8'));
      rawBodies.set(req, buf);
      done(null, parsed);
    } catch (err) {
      done(new ApiError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parse);
  app.addContentTypeParser(/^application\/[\w.+-]+\+json\b/, { parseAs: 'buffer' }, parse);
}
