// A sandbox service process for a bench (bench/lib/service.mjs) with its own instance label and
// state dir, the bench's SANDBOX_* environment passed on (SANDBOX_IMAGE, SANDBOX_WARM_POOL, ...).
// stop() ends it and removes what it leaves: its containers (by its label only), its mounts and
// state dir, its JetStream buckets (packages/test-support's cleanSandboxInstance, as the tests do),
// also when the bench is stopped by a signal (ends-with-bench.mjs).
import { resolve } from 'node:path';
import { startService } from './service.mjs';
import { benchPrefix, root } from './stack-env.mjs';
import { stopOnSignal } from './ends-with-bench.mjs';

const { cleanSandboxInstance } = await import(resolve(root, 'packages/test-support/dist/index.js'));

// Variables of the benches themselves, not the service's.
const BENCH_ONLY = new Set(['SANDBOX_DIR_B']);

/** Returns { prefix, instance, child, client (typed, on its prefix), stop() }. */
export async function startSandboxService({ instance, dir, prefix = benchPrefix(), stateDir = `/var/lib/drael/sandbox-bench/${instance}`, env = {} }) {
  const service = await startService({
    app: 'sandbox',
    dir,
    prefix,
    env: {
      SANDBOX_INSTANCE: instance,
      SANDBOX_STATE_DIR: stateDir,
      ...env,
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('SANDBOX_') && !BENCH_ONLY.has(k))),
    },
  });
  return {
    prefix,
    instance,
    child: service.child,
    client: service.client,
    // Also run if the bench is stopped by a signal: the buckets and state dir outlive the process.
    stop: stopOnSignal(async () => {
      await service.stop();
      await cleanSandboxInstance(instance, stateDir, prefix);
    }),
  };
}
