import { metrics } from '@drael/metrics';

/** agent-run's series (docs/operations.md). */
const STATUSES = ['succeeded', 'failed', 'cancelled', 'timed_out', 'budget_exceeded', 'step_limit_reached'] as const;

const runs = metrics.counter({ name: 'drael_agent_run_runs_total', help: 'Runs this replica finished, by final status', labels: { status: STATUSES } });
const steps = metrics.histogram({
  name: 'drael_agent_run_step_duration_seconds',
  help: 'Steps recorded, by kind (inference.chat or the tool), timed from the end of the previous step (or the run start)',
  labels: { kind: 30 },
});
const budgetRefusals = metrics.counter({
  name: 'drael_agent_run_budget_refusals_total',
  help: "Runs ended by a budget refusal, by reason (budget_exceeded: the run's own budget; or billing's code: insufficient_balance, monthly_budget_reached, agent_rate_limited)",
  labels: { reason: ['budget_exceeded', 'insufficient_balance', 'monthly_budget_reached', 'agent_rate_limited'] },
});
const leaseLosses = metrics.counter({
  name: 'drael_agent_run_lease_losses_total',
  help: 'Run leases lost, by side (worker: this worker lost its claim and stopped; reaped: this replica ended a run whose worker vanished)',
  labels: { side: ['worker', 'reaped'] },
});
const resumed = metrics.counter({
  name: 'drael_agent_run_runs_resumed_total',
  help: "Runs taken back to queued to be resumed from their last step, by why (shutdown: this replica stopped past its drain; worker_lost: this replica found the run's worker gone)",
  labels: { why: ['shutdown', 'worker_lost'] },
});

const heldBack = metrics.counter({
  name: 'drael_agent_run_runs_held_back_total',
  help: 'Claims that left a run queued because its account had AGENT_RUN_ACCOUNT_CONCURRENCY runs running (its job waits as delayed and asks again)',
});

const retentionDeleted = metrics.counter({
  name: 'drael_agent_run_retention_deleted_total',
  help: 'Rows removed by retention (AGENT_RUN_RETENTION_DAYS) on this replica, by kind (runs: ended runs with their steps, receipts and events; agents: deleted agents that only those runs named)',
  labels: { kind: ['runs', 'agents'] },
});

const retentionSweeps = metrics.counter({
  name: 'drael_agent_run_retention_sweeps_total',
  help: 'Retention sweeps on this replica, by outcome (ok: it ran until nothing older was left; failed: a batch failed, Postgres unreachable or refusing, and the next sweep tries again)',
  labels: { outcome: ['ok', 'failed'] },
});

const sources: {
  queue?: () => Promise<Record<string, number>>;
  stuck?: () => Promise<number>;
} = {};

metrics.gauge({
  name: 'drael_agent_run_queue_jobs',
  help: 'Jobs in the BullMQ run queue, by state (waiting, active, delayed), read at scrape time',
  labels: { state: ['waiting', 'active', 'delayed'] },
  collect: async (set) => {
    const counts = await sources.queue?.().catch(() => undefined);
    if (!counts) return;
    for (const state of ['waiting', 'active', 'delayed'] as const) set({ state }, counts[state] ?? 0);
  },
});
metrics.gauge({
  name: 'drael_agent_run_runs_lease_expired',
  help: 'Runs still marked running whose lease has lapsed (their worker is gone and they await the reaper), read at scrape time',
  collect: async (set) => {
    const n = await sources.stuck?.().catch(() => undefined);
    if (n !== undefined) set({}, n);
  },
});

export function watchRuns(s: typeof sources): void {
  Object.assign(sources, s);
}

/** A run ended with `status`; a budget refusal is counted by its reason too. */
export function recordRunEnded(ending: { status: string; errorCode?: string | null }): void {
  runs.inc({ status: ending.status });
  if (ending.status === 'budget_exceeded') budgetRefusals.inc({ reason: ending.errorCode ?? 'budget_exceeded' });
}

/** A step of kind `kind` was recorded; `since` is when the previous one ended (performance.now()). */
export const recordStep = (kind: string, since: number) => steps.observe({ kind }, (performance.now() - since) / 1000);
/** A run was held back by its account's cap of runs running. */
export const recordHeldBack = () => heldBack.inc({});
export const recordLeaseLoss = (side: 'worker' | 'reaped') => leaseLosses.inc({ side });
/** A run was taken back to queued, to be resumed from its last step by any worker. */
export const recordRunResumed = (why: 'shutdown' | 'worker_lost') => resumed.inc({ why });
/** A retention sweep ended: ran to the end, or stopped by a failed batch. */
export const recordRetentionSweep = (outcome: 'ok' | 'failed') => retentionSweeps.inc({ outcome });
/** Retention removed `runs` ended runs and `agents` deleted agents in one batch. */
export function recordRetention(removed: { runs: number; agents: number }): void {
  if (removed.runs > 0) retentionDeleted.inc({ kind: 'runs' }, removed.runs);
  if (removed.agents > 0) retentionDeleted.inc({ kind: 'agents' }, removed.agents);
}
