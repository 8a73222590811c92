import 'reflect-metadata';
import { parseEnv } from '@drael/config';
import { sandboxCatalog } from '@drael/contracts';
import { exitOnSignals, failBoot, startService } from '@drael/nats-rpc';
import { configSchema } from './config/config.schema.js';
import { SandboxModule } from './sandbox.module.js';

try {
  const config = parseEnv(configSchema);
  const running = await startService({
    service: 'sandbox',
    module: SandboxModule.forRoot(config),
    catalog: sandboxCatalog,
    natsUrl: config.NATS_URL,
    prefix: config.DRAEL_NATS_PREFIX,
    logLevel: config.LOG_LEVEL,
  });
  exitOnSignals(running);
} catch (err) {
  failBoot('sandbox', err);
}
