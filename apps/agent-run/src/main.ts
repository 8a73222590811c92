import 'reflect-metadata';
import { parseEnv, tracingOf } from '@drael/config';
import { agentRunCatalog } from '@drael/contracts';
import { isDatabaseUnavailable } from '@drael/db-migrate';
import { exitOnSignals, failBoot, startService } from '@drael/nats-rpc';
import { configSchema } from './config/config.schema.js';
import { AgentRunModule } from './agent-run.module.js';
import { RunWorkerService } from './runs/run-worker.service.js';

try {
  const config = parseEnv(configSchema);
  const running = await startService({
    service: 'agent-run',
    module: AgentRunModule.forRoot(config),
    catalog: agentRunCatalog,
    natsUrl: config.NATS_URL,
    security: config,
    prefix: config.DRAEL_NATS_PREFIX,
    logLevel: config.LOG_LEVEL,
    healthPort: config.HEALTH_PORT,
    metricsEnabled: config.METRICS_ENABLED,
    tracing: tracingOf(config),
    // The database down or restarting is an outage to retry (503 at the gateway), not a defect (500).
    unavailableWhen: isDatabaseUnavailable,
    // A run-events long poll answers within 20 s; let it finish before the connection drains.
    drainTimeoutMs: 25_000,
    // Runs in progress finish (AGENT_RUN_DRAIN_MS) while this replica still answers reads.
    drainBeforeClose: (app) => app.get(RunWorkerService).drain(),
  });
  exitOnSignals(running);
} catch (err) {
  failBoot('agent-run', err);
}
