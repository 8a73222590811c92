import { isRpcError } from '@drael/nats-rpc';
import type { ToolLevel } from '@drael/contracts';

/** A source a hosted web tool used: what citations and `include` sources point at. */
export interface Source {
  readonly url: string;
  readonly title: string | null;
}

export interface ToolFailure {
  readonly code: string;
  readonly message: string;
}

/**
 * What one hosted tool call produced: the JSON document the model reads as evidence (spec 02:
 * results are never rewritten into instructions), and for the client's item: sources, results or
 * a typed failure.
 */
export interface ToolOutcome {
  readonly forModel: Record<string, unknown>;
  readonly failure?: ToolFailure;
  readonly sources: readonly Source[];
  /** Fields merged into the client-facing item (e.g. results of a search). */
  readonly itemFields?: Record<string, unknown>;
}

export interface HostedCallContext {
  readonly accountId: string;
  readonly toolLevel: ToolLevel;
  readonly allowedDomains: readonly string[];
  readonly signal: AbortSignal;
  readonly requestId: string;
}

export function failed(code: string, message: string, extra: Record<string, unknown> = {}): ToolOutcome {
  // spec 01: a failure says ok:false and why, never silence.
  return { forModel: { ok: false, error: code, why: message, ...extra }, failure: { code, message }, sources: [] };
}

/** A thrown service error as a typed tool failure; the code stays the service's own. */
export function failedFrom(err: unknown): ToolOutcome {
  if (isRpcError(err)) return failed(err.code, err.message);
  if ((err as { name?: string }).name === 'AbortError') return failed('aborted', 'the request was cancelled');
  return failed('internal', 'the tool failed unexpectedly');
}

/** The model's JSON arguments, or undefined when they are not a JSON object. */
export function parseArguments(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

// spec 01: every field of a tool result is cut at 8 KiB, with the cut stated.
export const FIELD_LIMIT_BYTES = 8 * 1024;

export function cutField(text: string, limit = FIELD_LIMIT_BYTES): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= limit) return text;
  // Back off to a character boundary so the cut never splits a UTF-8 sequence.
  let end = limit;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return `${buf.subarray(0, end).toString('utf8')}\n[cut: ${buf.length - end} more bytes not shown]`;
}
