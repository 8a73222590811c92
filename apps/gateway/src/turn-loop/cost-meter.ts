import type { DeploymentConfig } from '../models/model-routes.config.js';
import type { TurnUsage } from '../engine/turn-stream.reader.js';

/**
 * What one request has spent on model calls, parent and sub-agents together, in USD from the
 * token prices of the deployment that served each turn (input_per_1m / output_per_1m in DRAEL_MODELS). spec 04: child spend
 * counts toward the request's cost ceiling.
 */
export class CostMeter {
  private spent = 0;
  readonly usage: TurnUsage = { prompt_tokens: 0, completion_tokens: 0 };

  constructor(readonly ceilingUsd: number) {}

  add(route: Pick<DeploymentConfig, 'input_per_1m' | 'output_per_1m'>, usage: TurnUsage): void {
    this.usage.prompt_tokens += usage.prompt_tokens;
    this.usage.completion_tokens += usage.completion_tokens;
    this.spent += (usage.prompt_tokens * route.input_per_1m + usage.completion_tokens * route.output_per_1m) / 1_000_000;
  }

  get reached(): boolean {
    return this.spent >= this.ceilingUsd;
  }
}
