import 'reflect-metadata';
import { parseEnv, tracingOf } from '@drael/config';
import { MAX_TIMEOUT_S, sandboxCatalog } from '@drael/contracts';
import { exitOnSignals, failBoot, startService } from '@drael/nats-rpc';
import { configSchema } from './config/config.schema.js';
import { SandboxModule } from './sandbox.module.js';

// sandbox.run.cancel.v1 is a broadcast (run/run-cancel.listener.ts), not a queue-group handler:
// the boot check covers the rest of the catalog.
const { runCancel: _broadcast, ...queueGroupCatalog } = sandboxCatalog;

try {
  const config = parseEnv(configSchema);
  const running = await startService({
    service: 'sandbox',
    module: SandboxModule.forRoot(config),
    catalog: queueGroupCatalog,
    natsUrl: config.NATS_URL,
    security: config,
    prefix: config.DRAEL_NATS_PREFIX,
    logLevel: config.LOG_LEVEL,
    healthPort: config.HEALTH_PORT,
    metricsEnabled: config.METRICS_ENABLED,
    tracing: tracingOf(config),
    // A SIGTERM lets the longest run (spec 01: 300 s) finish before the process exits.
    drainTimeoutMs: (MAX_TIMEOUT_S + 30) * 1000,
  });
  exitOnSignals(running);
} catch (err) {
  failBoot('sandbox', err);
}
