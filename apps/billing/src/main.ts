import 'reflect-metadata';
import { parseEnv, tracingOf } from '@drael/config';
import { billingCatalog } from '@drael/contracts';
import { isDatabaseUnavailable } from '@drael/db-migrate';
import { exitOnSignals, failBoot, startService } from '@drael/nats-rpc';
import { configSchema } from './config/config.schema.js';
import { BillingModule } from './billing.module.js';

try {
  const config = parseEnv(configSchema);
  const running = await startService({
    service: 'billing',
    module: BillingModule.forRoot(config),
    catalog: billingCatalog,
    natsUrl: config.NATS_URL,
    security: config,
    prefix: config.DRAEL_NATS_PREFIX,
    logLevel: config.LOG_LEVEL,
    healthPort: config.HEALTH_PORT,
    metricsEnabled: config.METRICS_ENABLED,
    tracing: tracingOf(config),
    // The database down or restarting is an outage to retry (503 at the gateway), not a defect (500).
    unavailableWhen: isDatabaseUnavailable,
  });
  exitOnSignals(running);
} catch (err) {
  failBoot('billing', err);
}
