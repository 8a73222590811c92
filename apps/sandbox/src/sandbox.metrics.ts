import type { SandboxRunReply } from '@drael/contracts';
import { metrics } from '@drael/metrics';
import { RpcError } from '@drael/nats-rpc';

/** The sandbox's series (docs/operations.md). Runtimes are the fixed list of the contracts; outcomes a fixed list. */
const RUNTIMES = { runtime: 10 } as const;

const runs = metrics.histogram({
  name: 'drael_sandbox_run_duration_seconds',
  help: "run_code runs, by runtime and outcome (ok, error: non-zero exit, timeout, oom, busy: refused at capacity or not started in time, share: refused past its tenant's share, refused: bad input or quota, failed: engine error), from arrival to reply",
  labels: { ...RUNTIMES, outcome: ['ok', 'error', 'timeout', 'oom', 'busy', 'share', 'refused', 'failed'] },
});
const containerStart = metrics.histogram({
  name: 'drael_sandbox_container_start_seconds',
  help: 'Time for the engine to start a created container (created ahead or on demand), by runtime',
  labels: RUNTIMES,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16],
});

/** What the gauges read at scrape time (set by the owners at construction). */
const sources: {
  slots?: () => { active: number; queued: number; max: number; queueMax: number };
  warm?: () => number;
  sessions?: () => number;
} = {};

metrics.gauge({
  name: 'drael_sandbox_slots_in_use',
  help: 'Runs holding a slot (a container running or being set up)',
  collect: (set) => sources.slots && set({}, sources.slots().active),
});
metrics.gauge({ name: 'drael_sandbox_slots', help: 'Run slots this replica has (SANDBOX_MAX_CONCURRENT)', collect: (set) => sources.slots && set({}, sources.slots().max) });
metrics.gauge({ name: 'drael_sandbox_queue_depth', help: 'Runs waiting for a slot', collect: (set) => sources.slots && set({}, sources.slots().queued) });
metrics.gauge({
  name: 'drael_sandbox_queue_capacity',
  help: 'Runs that may wait before sandbox_busy (SANDBOX_MAX_QUEUE)',
  collect: (set) => sources.slots && set({}, sources.slots().queueMax),
});
metrics.gauge({
  name: 'drael_sandbox_warm_pool_size',
  help: 'Containers created ahead of demand (the pool of fresh workspaces, for runs and for requests), not yet taken',
  collect: (set) => sources.warm && set({}, sources.warm()),
});
metrics.gauge({
  name: 'drael_sandbox_sessions_held',
  help: 'Session volumes this replica holds (mounted, held, or being worked on)',
  collect: (set) => sources.sessions && set({}, sources.sessions()),
});

export function watchSandbox(s: typeof sources): void {
  Object.assign(sources, s);
}

function outcomeOf(reply: SandboxRunReply | undefined, err: unknown): string {
  if (reply) return reply.timed_out ? 'timeout' : reply.oom_killed ? 'oom' : reply.ok ? 'ok' : 'error';
  // One tenant past its share is that tenant's doing, not the replica's capacity (the busy alert's).
  if (err instanceof RpcError && err.code === 'sandbox_busy') return err.details?.share === 'tenant' ? 'share' : 'busy';
  if (err instanceof RpcError) return err.retryable ? 'failed' : 'refused';
  return 'failed';
}

/** Runs one run_code request and records its outcome and duration. */
export async function measureRun(runtime: string, run: () => Promise<SandboxRunReply>): Promise<SandboxRunReply> {
  const done = runs.time({ runtime });
  let reply: SandboxRunReply | undefined;
  let error: unknown;
  try {
    reply = await run();
    return reply;
  } catch (err) {
    error = err;
    throw err;
  } finally {
    done({ outcome: outcomeOf(reply, error) });
  }
}

export const recordContainerStart = (runtime: string, ms: number) => containerStart.observe({ runtime }, ms / 1000);
