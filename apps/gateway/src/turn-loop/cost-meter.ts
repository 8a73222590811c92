import type { DeploymentConfig } from '../models/model-routes.config.js';
import type { TurnUsage } from '../engine/turn-stream.reader.js';

/**
 * What one request has spent, parent and sub-agents together: on model calls, in USD from the
 * token prices of the deployment that served each turn (input_per_1m / output_per_1m in
 * DRAEL_MODELS; spec 04: child spend counts toward the request's cost ceiling), and in tool calls.
 * The tool calls are bounded because each one can leave the gateway (a page fetched, a search
 * sent to SearXNG's engines, a container run) and the caps per turn multiply: without a bound
 * one request of a runaway or prompt-injected model, fanning out through its sub-agents, could
 * send thousands (DRAEL_REQUEST_TOOL_CALLS).
 */
export class CostMeter {
  private spent = 0;
  private toolCalls = 0;
  readonly usage: TurnUsage = { prompt_tokens: 0, completion_tokens: 0 };

  constructor(
    readonly ceilingUsd: number,
    readonly toolCallLimit: number,
  ) {}

  /** Counts one tool call; false once the request has made its limit (the call is then not run). */
  takeToolCall(): boolean {
    if (this.toolCalls >= this.toolCallLimit) return false;
    this.toolCalls++;
    return true;
  }

  add(route: Pick<DeploymentConfig, 'input_per_1m' | 'output_per_1m'>, usage: TurnUsage): void {
    this.usage.prompt_tokens += usage.prompt_tokens;
    this.usage.completion_tokens += usage.completion_tokens;
    this.spent += (usage.prompt_tokens * route.input_per_1m + usage.completion_tokens * route.output_per_1m) / 1_000_000;
  }

  get reached(): boolean {
    return this.spent >= this.ceilingUsd;
  }
}
