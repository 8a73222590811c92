import type { AgentTool } from '@drael/contracts';
import type { z } from 'zod';

/** What a tool execution did, shaped for the model, with what it cost to run. */
export interface ToolOutcome {
  /** The tool message's content (JSON). */
  content: string;
  /** false: reported to the model as a tool error. */
  ok: boolean;
  /** Whether the tool ran (and is billed); a call refused before running costs nothing. */
  ran: boolean;
  durationS: number;
  usage: Record<string, number | string | null>;
}

export interface ToolContext {
  accountId: string;
  runId: string;
  signal: AbortSignal;
}

/** One entry of the tool registry: the name in the registry, the function the model sees, how it runs. */
export interface AgentToolDefinition<Args = unknown> {
  readonly registryName: AgentTool;
  readonly functionName: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly args: z.ZodType<Args>;
  /** The longest an execution may take, in seconds: its budget reservation is this times the price. */
  readonly timeoutS: number;
  execute(args: Args, ctx: ToolContext): Promise<ToolOutcome>;
}

/** The JSON of a tool error the model reads (spec 03: reported back, the run goes on). */
export function toolError(error: string, message: string): string {
  return JSON.stringify({ status: 'error', error, message });
}
