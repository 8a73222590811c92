import type { z } from 'zod';
import { compiledCheck, type SchemaCheck } from '@drael/schema-check';
import { ApiError } from '../errors/api-error.js';

/** OpenAI names a parameter like `messages[0].content`. */
export function paramOf(path: readonly PropertyKey[]): string | null {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
  return out || null;
}

/** Each schema's check, made once: see checkOf. */
const checks = new WeakMap<z.ZodType, SchemaCheck<unknown>>();

/**
 * A body or query is parsed JSON (or strings), so its schema's check is compiled where the schema
 * allows (@drael/schema-check: a validator that may only be stricter than zod; whatever it refuses,
 * and every schema it cannot express, zod decides, so the answer and its message are zod's). Zod's
 * general parser was the largest single cost of a small body's check (bench/search/README.md).
 */
function checkOf<S extends z.ZodType>(schema: S): SchemaCheck<z.output<S>> {
  let check = checks.get(schema);
  if (check === undefined) {
    check = compiledCheck(schema);
    checks.set(schema, check);
  }
  return check as SchemaCheck<z.output<S>>;
}

/** Parses a request body against its schema; a violation is a 400 naming the offending param. */
export function validateBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = checkOf(schema).safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = paramOf(issue?.path ?? []);
  throw new ApiError('invalid_request', `Invalid ${param ?? 'body'}: ${issue?.message ?? 'invalid value'}`, param);
}
