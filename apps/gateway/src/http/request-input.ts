import type { IncomingHttpHeaders } from 'node:http';
import { MAX_JSON_DEPTH } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';
import { paramOf } from '../openai/validate.js';

/**
 * The edge's rules for what any request may carry, checked once here (the JSON body parser, the
 * route access hook for path and query) so that no route, service or database sees it:
 * - no NUL and no unpaired UTF-16 surrogate in any string: PostgreSQL refuses NUL in text and
 *   JSON, and a lone surrogate cannot be encoded as UTF-8 on the way to a service;
 * - JSON nested at most MAX_JSON_DEPTH deep (@drael/contracts: the same bound at the NATS edge).
 */

declare global {
  interface String {
    /** ES2024 (Node 20 has it): false when the string holds an unpaired surrogate. */
    isWellFormed(): boolean;
  }
}

/** True for a string no service can store or encode: a NUL or an unpaired surrogate. */
export function isHostileString(s: string): boolean {
  return s.includes('\0') || !s.isWellFormed();
}

// Raw bytes that can decode to a NUL or a surrogate in a JSON string: the escapes `\u0000` and
// `\uD...`. (A raw NUL is already invalid JSON; raw surrogate bytes are invalid UTF-8 and decode to
// U+FFFD.) Only a body holding one of them has its strings checked one by one.
const SUSPECT_ESCAPES = ['\\u0000', '\\ud', '\\uD'].map((e) => Buffer.from(e, 'latin1'));

/**
 * Checks a parsed JSON body against the edge's rules; `raw` is the bytes it was parsed from.
 * The depth walk visits containers only, so its cost follows the body's structure, not its size.
 */
export function checkJsonBody(value: unknown, raw: Buffer): void {
  const strings = SUSPECT_ESCAPES.some((e) => raw.includes(e));
  const path: (string | number)[] = [];
  const fault = walk(value, 0, strings, path);
  if (fault === 'depth') throw tooDeep();
  if (fault === 'string') {
    const param = paramOf(path);
    throw new ApiError('invalid_request', `Invalid ${param ?? 'body'}: strings may not contain NUL characters or unpaired UTF-16 surrogates.`, param);
  }
}

/** A body nested deeper than MAX_JSON_DEPTH, told from its bytes or from its parsed value. */
export function tooDeep(): ApiError {
  return new ApiError('invalid_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`);
}

/** The first fault found, with `path` left pointing at it. */
function walk(value: unknown, depth: number, strings: boolean, path: (string | number)[]): 'depth' | 'string' | undefined {
  if (typeof value === 'string') return strings && isHostileString(value) ? 'string' : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= MAX_JSON_DEPTH) return 'depth';
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const fault = walk(value[i], depth + 1, strings, path);
      if (fault) return (path.unshift(i), fault);
    }
    return undefined;
  }
  for (const key in value) {
    // A bad key is not named (it would be echoed back): the param is the object holding it.
    if (strings && isHostileString(key)) return 'string';
    const fault = walk((value as Record<string, unknown>)[key], depth + 1, strings, path);
    if (fault) return (path.unshift(key), fault);
  }
  return undefined;
}

/**
 * Decoded path parameters and query values of a matched route. A path parameter names something
 * (an agent, a run, a file) and no such thing can hold these characters: 404, as for any unknown
 * id. A query value: 400 naming it.
 */
export function checkRouteInput(params: unknown, query: unknown): void {
  // for-in over the router's plain objects: most requests have none or one, and pay nothing more.
  if (params && typeof params === 'object') {
    for (const name in params) {
      const v = (params as Record<string, unknown>)[name];
      if (typeof v === 'string' && isHostileString(v)) throw new ApiError('not_found', `No such ${name === '*' ? 'path' : name}.`);
    }
  }
  if (query && typeof query === 'object') {
    for (const name in query) {
      const v = (query as Record<string, unknown>)[name];
      const bad = isHostileString(name) || (Array.isArray(v) ? v.some((x) => typeof x === 'string' && isHostileString(x)) : typeof v === 'string' && isHostileString(v));
      if (bad) {
        const param = isHostileString(name) ? null : name;
        throw new ApiError('invalid_request', `Invalid query parameter${param ? ` ${param}` : ''}: NUL characters and unpaired UTF-16 surrogates are not accepted.`, param);
      }
    }
  }
}

/** The request announces a body (a length above 0, or chunked). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
