import type { z } from 'zod';
import { ApiError } from '../errors/api-error.js';

/** OpenAI names a parameter like `messages[0].content`. */
export function paramOf(path: readonly PropertyKey[]): string | null {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
  return out || null;
}

/** Parses a request body against its schema; a violation is a 400 naming the offending param. */
export function validateBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = paramOf(issue?.path ?? []);
  throw new ApiError('invalid_request', `Invalid ${param ?? 'body'}: ${issue?.message ?? 'invalid value'}`, param);
}
