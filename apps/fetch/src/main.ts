import 'reflect-metadata';
import { parseEnv, tracingOf } from '@drael/config';
import { fetchCatalog } from '@drael/contracts';
import { exitOnSignals, failBoot, startService } from '@drael/nats-rpc';
import { configSchema } from './config/config.schema.js';
import { FetchModule } from './fetch.module.js';

try {
  const config = parseEnv(configSchema);
  const running = await startService({
    service: 'fetch',
    module: FetchModule.forRoot(config),
    catalog: fetchCatalog,
    natsUrl: config.NATS_URL,
    security: config,
    prefix: config.DRAEL_NATS_PREFIX,
    logLevel: config.LOG_LEVEL,
    healthPort: config.HEALTH_PORT,
    metricsEnabled: config.METRICS_ENABLED,
    tracing: tracingOf(config),
  });
  exitOnSignals(running);
} catch (err) {
  failBoot('fetch', err);
}
