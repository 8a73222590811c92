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
  const variant = caseVariantKeyOf(body, fieldsOf(schema));
  if (variant !== undefined) {
    throw new ApiError('invalid_request', `Invalid ${variant}: it differs from the field ${foldKey(variant)} only in case; send the field once, spelled as documented`, variant);
  }
  const parsed = checkOf(schema).safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = paramOf(issue?.path ?? []);
  throw new ApiError('invalid_request', `Invalid ${param ?? 'body'}: ${issue?.message ?? 'invalid value'}`, param);
}

/** The top-level fields an object schema declares (its shape's keys); none for other schemas. */
const fieldSets = new WeakMap<z.ZodType, ReadonlySet<string>>();
const NO_FIELDS: ReadonlySet<string> = new Set();

export function fieldsOf(schema: z.ZodType): ReadonlySet<string> {
  let fields = fieldSets.get(schema);
  if (fields === undefined) {
    const shape = (schema as { shape?: unknown }).shape;
    fields = typeof shape === 'object' && shape !== null ? new Set(Object.keys(shape)) : NO_FIELDS;
    fieldSets.set(schema, fields);
  }
  return fields;
}

/**
 * A top-level key that is not a field but differs from one only in case (`Model`, `STREAM`), or
 * undefined. Go's encoding/json (Ollama's, and other upstreams') matches keys to fields
 * case-insensitively and keeps the last match, so such a key would reach the upstream as the field
 * while the gateway validated, routed and billed the exact one (or its absence): refused, since
 * no re-encoding of the body makes it mean one thing to both.
 */
export function caseVariantKeyOf(body: unknown, fields: ReadonlySet<string>): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || fields.size === 0) return undefined;
  for (const key of Object.keys(body)) {
    if (fields.has(key)) continue;
    if (fields.has(foldKey(key))) return key;
  }
  return undefined;
}

/** Go's case folding of a key onto an ASCII field name: lower case, and U+017F (ſ) is an s (U+212A, the Kelvin sign, lower-cases to k already). */
function foldKey(key: string): string {
  return key.toLowerCase().replaceAll('\u017f', 's');
}
