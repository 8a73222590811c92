import 'reflect-metadata';
import { parseEnv } from '@drael/config';
import { agentRunCatalog } from '@drael/contracts';
import { exitOnSignals, failBoot, startService } from '@drael/nats-rpc';
import { configSchema } from './config/config.schema.js';
import { AgentRunModule } from './agent-run.module.js';

try {
  const config = parseEnv(configSchema);
  const running = await startService({
    service: 'agent-run',
    module: AgentRunModule.forRoot(config),
    catalog: agentRunCatalog,
    natsUrl: config.NATS_URL,
    prefix: config.DRAEL_NATS_PREFIX,
    logLevel: config.LOG_LEVEL,
  });
  exitOnSignals(running);
} catch (err) {
  failBoot('agent-run', err);
}
