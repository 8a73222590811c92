import { Module } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { gatewayCatalog, inferenceRouteToken, queueGroupCatalog } from '@drael/contracts';
import type { Logger } from '@drael/logger';
import { assertCatalogHandled, DrainingNatsServer, setHandlerLogger } from '@drael/nats-rpc';
import type { GatewayConfig } from '../config/config.schema.js';
import { InferenceController } from './inference.controller.js';
import { InferenceService } from './inference.service.js';

@Module({ controllers: [InferenceController], providers: [InferenceService] })
export class InferenceModule {}

/**
 * Makes the gateway a hybrid app: besides HTTP it answers its NATS subjects (gatewayCatalog) in
 * the `gateway` queue group, drained on shutdown like every service; inference also on one routed
 * subject per model alias it serves.
 */
export async function connectGatewaySubjects(app: INestApplication, config: GatewayConfig, logger: Logger): Promise<void> {
  // gateway.keys.forget.v1 reaches every replica through its own listener (auth/key-forget.listener.ts).
  const catalog = queueGroupCatalog(gatewayCatalog);
  assertCatalogHandled(catalog);
  // A handler's failure is logged, as in every service (startService does this there).
  setHandlerLogger(logger);
  app.connectMicroservice(
    {
      strategy: new DrainingNatsServer({
        servers: config.NATS_URL,
        service: 'gateway',
        prefix: config.DRAEL_NATS_PREFIX,
        drainTimeoutMs: config.SHUTDOWN_GRACE_MS,
        catalog,
        security: config,
        // One routed inference subject per alias this gateway serves: agent-run's model calls
        // reach only a gateway that has the alias (inferenceRouteToken).
        routes: { [gatewayCatalog.inferenceChat.subject]: Object.keys(config.DRAEL_MODELS).map(inferenceRouteToken) },
      }),
    },
    { inheritAppConfig: true },
  );
  await app.startAllMicroservices();
}
