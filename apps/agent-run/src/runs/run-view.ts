import type { RunStep } from '@drael/contracts';
import { microsToUsd } from '../loop/money.js';

/** A step row as the public API (the steps list and the run.step event) shows it. */
export function stepView(s: { runId: string; sequence: number; kind: string; status: string; costMicros: number; detail: unknown; createdAt: Date }): RunStep {
  return {
    run_id: s.runId,
    sequence: s.sequence,
    kind: s.kind as RunStep['kind'],
    status: s.status as RunStep['status'],
    cost_usd: microsToUsd(s.costMicros),
    detail: s.detail as Record<string, unknown>,
    created_at: s.createdAt.toISOString(),
  };
}
