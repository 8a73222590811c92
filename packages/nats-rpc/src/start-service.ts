import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestMicroservice, Type } from '@nestjs/common';
import type { Catalog, ServiceName } from '@drael/contracts';
import { createLogger, PinoNestLogger, type Logger } from '@drael/logger';
import { DrainingNatsServer } from './draining-nats.server.js';
import { assertCatalogHandled } from './catalog-check.js';
import { setHandlerLogger } from './handles.decorator.js';
import { HEALTH_CHECKS, type HealthCheck } from './health-checks.js';
import { startHealthHttp, type HealthHttpServer } from './health-http.server.js';
import type { NatsSecurity } from './nats-security.js';

export interface ServiceBootOptions {
  service: ServiceName;
  module: Type<unknown> | DynamicModule;
  catalog: Catalog;
  natsUrl: string;
  prefix: string;
  /** NATS credentials and TLS: the service's parsed config (NATS_CREDS_FILE, NATS_TLS_CA_FILE, ...). */
  security?: NatsSecurity;
  logLevel?: string;
  /** How long a SIGTERM waits for handlers in flight (a sandbox run can take minutes). */
  drainTimeoutMs?: number;
  /** HEALTH_PORT: serve GET /healthz and /readyz on this port (0: any free port); unset: none. */
  healthPort?: number;
}

export interface RunningService {
  app: INestMicroservice;
  server: DrainingNatsServer;
  logger: Logger;
  /** The HTTP health port, when one was asked for. */
  health?: HealthHttpServer;
  close(): Promise<void>;
}

/** Boots a service: NATS in its queue group, registered as a NATS micro service ($SRV), the catalog check, JSON logs. */
export async function startService(options: ServiceBootOptions): Promise<RunningService> {
  const logger = createLogger(options.service, options.logLevel ?? 'info');
  setHandlerLogger(logger);
  const server = new DrainingNatsServer({
    servers: options.natsUrl,
    service: options.service,
    prefix: options.prefix,
    drainTimeoutMs: options.drainTimeoutMs ?? 30_000,
    catalog: options.catalog,
    security: options.security,
  });
  const app = await NestFactory.createMicroservice(options.module, {
    strategy: server,
    logger: new PinoNestLogger(logger),
  });
  await app.init();
  assertCatalogHandled(options.catalog);
  await app.listen();
  let draining = false;
  let health: HealthHttpServer | undefined;
  if (options.healthPort !== undefined) {
    let checks: HealthCheck[] = [];
    try {
      checks = app.get<HealthCheck[]>(HEALTH_CHECKS, { strict: false });
    } catch {
      // a service without dependencies to check provides none
    }
    health = await startHealthHttp({
      service: options.service,
      port: options.healthPort,
      checks,
      nats: () => server.connection,
      draining: () => draining,
    });
  }
  logger.info({ nats: options.natsUrl, prefix: options.prefix || undefined, health_port: health?.port, micro_id: server.microId }, `${options.service} listening`);
  let closing: Promise<void> | undefined;
  return {
    app,
    server,
    logger,
    health,
    close: () =>
      (closing ??= (async () => {
        draining = true;
        try {
          await app.close();
        } finally {
          await health?.close();
        }
      })()),
  };
}

/** SIGTERM and SIGINT drain the service, then exit 0; a second signal exits at once. */
export function exitOnSignals(running: Pick<RunningService, 'close' | 'logger'>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    running.logger.info({ signal }, 'draining');
    running.close().then(
      () => {
        running.logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        running.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** Boot failure (bad config, catalog check) prints one readable message and exits 1. */
export function failBoot(service: string, err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${JSON.stringify({ level: 'fatal', service, msg: `boot failed: ${message}` })}\n`);
  process.exit(1);
}
