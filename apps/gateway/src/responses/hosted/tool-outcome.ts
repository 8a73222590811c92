import type { ToolLevel } from '@drael/contracts';
import { failed, failureOf } from '../../tools/tool-result.js';

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

/** A hosted call that could not do its work: the model reads the one `ok: false` shape (tools/tool-result.ts), the client's item the typed failure. */
export function failedOutcome(code: string, message: string): ToolOutcome {
  return { forModel: failed(code, message), failure: { code, message }, sources: [] };
}

/** A thrown service error as a failed outcome, by the one rule of tools/tool-result.ts (the code stays the service's own). */
export function failedOutcomeOf(err: unknown): ToolOutcome {
  const result = failureOf(err, 'internal');
  return failedOutcome(result.error as string, result.why as string);
}
