import { isUtf8 } from 'node:buffer';
import { DEPTH_PRESCAN_FROM_BYTES, jsonTextNestedDeeperThan, MAX_JSON_DEPTH } from '@drael/contracts';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { bodyTooLarge, transportError } from '../errors/error-response.js';
import { checkJsonBody, tooDeep } from './request-input.js';

const rawBodies = new WeakMap<FastifyRequest, Buffer>();

/** The bytes of a JSON body as they arrived, so a proxied request can be forwarded without re-encoding. */
export function rawBodyOf(req: FastifyRequest): Buffer | undefined {
  return rawBodies.get(req);
}

/**
 * JSON bodies are parsed with plain JSON.parse (the payload is forwarded, never merged into an
 * object of ours, so prototype-poisoning keys are inert); malformed JSON is the typed
 * `invalid_json` error.
 */
export function parseJsonBody(buf: Buffer): unknown {
  if (buf.length === 0) throw new ApiError('invalid_json', 'Request body is empty; expected JSON');
  // Bytes that are not UTF-8 would be decoded to U+FFFD here while a proxied request forwards
  // them as they came: the gateway would check one text and the upstream read another. Refused,
  // as RFC 8259 §8.1 asks of JSON between systems (isUtf8 is simdutf: ~1 µs for a 2 KB body).
  if (!isUtf8(buf)) throw new ApiError('invalid_json', 'Request body is not valid UTF-8; JSON bodies must be UTF-8 encoded (RFC 8259, section 8.1).');
  // Depth told from the bytes before a large body is parsed: parsing 32 MiB of nested brackets
  // (the body limit) held the event loop 11 s before the parsed value could be refused below.
  if (buf.length > DEPTH_PRESCAN_FROM_BYTES && jsonTextNestedDeeperThan(buf, MAX_JSON_DEPTH)) throw tooDeep();
  let parsed: unknown;
  try {
    parsed = JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_json', `Request body is not valid JSON: ${printable((err as Error).message)}`);
  }
  // Depth, NUL and lone surrogates: decided here, once, for every JSON route.
  checkJsonBody(parsed, buf);
  return parsed;
}

// V8's message quotes the start of the body: whatever bytes came (binary, control characters)
// would be echoed back; only printable ASCII is kept, and not much of it.
function printable(message: string): string {
  const clean = message.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}...` : clean;
}

/** `application/json`, with or without parameters (the chat completions route serves only these itself). */
export function isPlainJson(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.startsWith('application/json') && (contentType.length === 16 || contentType[16] === ';' || contentType[16] === ' ');
}

/**
 * JSON exchanged between systems is UTF-8 (RFC 8259 §8.1), and the body is decoded as such: a
 * Content-Type naming another charset (`charset=utf-16`, `latin1`) would be read as something the
 * client did not send, so it is refused, naming the charset. `utf-8` (any case, quoted or not;
 * `utf8`, the common misspelling of the same encoding) and no charset are served.
 */
export function checkJsonCharset(contentType: string | undefined): void {
  if (contentType === undefined || !contentType.includes('=')) return;
  const charset = CHARSET.exec(contentType)?.[1]
    ?.replace(/^"(.*)"$/, '$1')
    .toLowerCase();
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return;
  throw transportError(415, 'unsupported_charset', `Content-Type names charset "${printable(charset)}": JSON bodies are read as UTF-8 (RFC 8259); send charset=utf-8 or none.`);
}

// A media type's charset parameter (RFC 9110 §8.3.1), its value a token or a quoted string.
const CHARSET = /;\s*charset\s*=\s*("[^"]*"|[^;\s]*)/i;

/** Reads a whole request body, at most `limit` bytes (413 beyond), and parses it as JSON. */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<{ raw: Buffer; parsed: unknown }> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (declared > limit) return reject(bodyTooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(bodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => {
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      let parsed: unknown;
      try {
        parsed = parseJsonBody(raw);
      } catch (err) {
        return reject(err instanceof Error ? err : new Error(String(err)));
      }
      resolve({ raw, parsed });
    });
    req.once('error', reject);
    req.once('aborted', () => reject(new ApiError('invalid_request', 'The client aborted the request body')));
  });
}

/** Fastify's JSON parser for the Nest routes: the same parsing, and the raw bytes kept. */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parse = (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const buf = body as Buffer;
    let parsed: unknown;
    try {
      // Here, where a body is read as JSON: a file upload's bytes never come this way
      // (sessions.module.ts), whatever its Content-Type says.
      checkJsonCharset(req.headers['content-type']);
      parsed = parseJsonBody(buf);
    } catch (err) {
      return done(err as Error, undefined);
    }
    rawBodies.set(req, buf);
    done(null, parsed);
  };
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parse);
  app.addContentTypeParser(/^application\/[\w.+-]+\+json\b/, { parseAs: 'buffer' }, parse);
}
