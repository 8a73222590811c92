import type { z } from 'zod';
import { failed, type ToolResult } from './tool-result.js';

/**
 * The model's arguments for a call: a JSON string, untrusted. Parsed and checked against the
 * tool's schema; a violation comes back to the model as `invalid_arguments` naming the field.
 */
export function parseArguments<S extends z.ZodType>(schema: S, args: unknown): { ok: true; value: z.output<S> } | { ok: false; result: ToolResult } {
  const parsed = schema.safeParse(args);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || 'arguments';
  return { ok: false, result: failed('invalid_arguments', `${field}: ${issue?.message ?? 'invalid'}`) };
}
