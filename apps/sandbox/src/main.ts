import 'reflect-metadata';
import { parseEnv, tracingOf } from '@drael/config';
import { MAX_TIMEOUT_S, queueGroupCatalog, sandboxCatalog } from '@drael/contracts';
import { exitOnSignals, failBoot, startService } from '@drael/nats-rpc';
import { configSchema } from './config/config.schema.js';
import { SessionPlacement } from './placement/session-placement.service.js';
import { SandboxModule } from './sandbox.module.js';

try {
  const config = parseEnv(configSchema);
  const running = await startService({
    service: 'sandbox',
    module: SandboxModule.forRoot(config),
    // sandbox.run.cancel.v1 reaches every replica (run/run-cancel.listener.ts, `delivery` in its
    // entry): the boot check and $SRV cover the queue-group rest of the catalog.
    catalog: queueGroupCatalog(sandboxCatalog),
    natsUrl: config.NATS_URL,
    security: config,
    prefix: config.DRAEL_NATS_PREFIX,
    logLevel: config.LOG_LEVEL,
    healthPort: config.HEALTH_PORT,
    metricsEnabled: config.METRICS_ENABLED,
    tracing: tracingOf(config),
    // A SIGTERM lets the longest run (spec 01: 300 s) finish before the process exits.
    drainTimeoutMs: (MAX_TIMEOUT_S + 30) * 1000,
    // A replica whose engine is gone takes no runs: the others get them (multi-replica pass, F2),
    // and its sessions too (the placement gives them up while it is out).
    ...(config.SANDBOX_QUEUE_HEALTH_INTERVAL_MS > 0
      ? { queueMembership: { intervalMs: config.SANDBOX_QUEUE_HEALTH_INTERVAL_MS, failuresToLeave: config.SANDBOX_QUEUE_HEALTH_FAILURES, listener: SessionPlacement } }
      : {}),
  });
  exitOnSignals(running);
} catch (err) {
  failBoot('sandbox', err);
}
