import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestMicroservice, Type } from '@nestjs/common';
import type { NestMicroservice } from '@nestjs/microservices';
import type { Catalog, ServiceName } from '@drael/contracts';
import { createLogger, PinoNestLogger, type Logger } from '@drael/logger';
import { metrics, setMetricsEnabled } from '@drael/metrics';
import { startTracing, stopTracing, type TracingOptions } from '@drael/tracing';
import { DrainingNatsServer } from './draining-nats.server.js';
import { assertCatalogHandled } from './catalog-check.js';
import { setHandlerLogger, setUnavailableWhen } from './handles.decorator.js';
import { HEALTH_CHECKS, type HealthCheck } from './health-checks.js';
import { startHealthHttp, type HealthHttpServer } from './health-http.server.js';
import type { NatsSecurity } from './nats-security.js';
import { keepQueueMembershipHealthy, type QueueMembershipListener, type QueueMembershipOptions } from './queue-membership.js';

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
  /** HEALTH_PORT: serve GET /healthz, /readyz and /metrics on this port (0: any free port); unset: none. */
  healthPort?: number;
  /** METRICS_ENABLED (default on): off, nothing is recorded and /metrics answers empty. */
  metricsEnabled?: boolean;
  /** OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_BSP_SCHEDULE_DELAY, as `tracingOf(config)` (@drael/config) gives them; no endpoint: tracing off. */
  tracing?: Omit<TracingOptions, 'service'>;
  /** Failures of a dependency the handlers cannot work without at that moment (the database): answered `unavailable`, not `internal`. */
  unavailableWhen?: (err: unknown) => boolean;
  /**
   * Work to finish on close while the service still answers its subjects (agent-run's runs in
   * progress): a replica draining for minutes would otherwise stop answering reads at once, and a
   * deployment of one replica would answer 503 to every read for the whole drain. Nest closes the
   * transport before its lifecycle hooks, so this runs first.
   */
  drainBeforeClose?: (app: INestMicroservice) => Promise<void>;
  /**
   * The replica stays in the queue group only while its critical HEALTH_CHECKS pass
   * (queue-membership.ts): for a service whose replicas each depend on something of their own
   * (the sandbox's container engine). Absent: always in it. `listener`: the provider (its class)
   * that gives up what the replica holds while it is out (QueueMembershipListener).
   */
  queueMembership?: QueueMembershipOptions & { listener?: Type<QueueMembershipListener> };
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
  // First, so that every span (and the trace_id of every log line) from boot on is there.
  await startTracing({ service: options.service, endpoint: undefined, ...options.tracing });
  const logger = createLogger(options.service, options.logLevel ?? 'info');
  setMetricsEnabled(options.metricsEnabled ?? true);
  if (options.metricsEnabled ?? true) metrics.collectProcessMetrics();
  setHandlerLogger(logger);
  setUnavailableWhen(options.unavailableWhen);
  const server = new DrainingNatsServer({
    servers: options.natsUrl,
    service: options.service,
    prefix: options.prefix,
    drainTimeoutMs: options.drainTimeoutMs ?? 30_000,
    catalog: options.catalog,
    security: options.security,
  });
  // createMicroservice answers the NestMicroservice it builds, typed as its interface.
  const app = (await NestFactory.createMicroservice(options.module, {
    strategy: server,
    logger: new PinoNestLogger(logger),
  })) as NestMicroservice;
  // @nestjs/microservices 12.1's init() runs the init and bootstrap hooks through core's init and
  // then again in its own registerModules(), whose guard flag only core's hybrid apps set: every
  // hook ran twice (agent-run started two BullMQ workers, twice AGENT_RUN_CONCURRENCY runs at once;
  // billing's and sandbox's sweepers and listeners twice). Set here, each hook runs once.
  app.setIsInitHookCalled(true);
  await app.init();
  assertCatalogHandled(options.catalog);
  server.allowDirectDispatch({
    instanceOf: (owner) => app.get(owner as never, { strict: false }),
    // Nest keeps it on the app without an accessor; read where it is, and direct dispatch stays off if it moved.
    applicationConfig: (app as unknown as { applicationConfig?: unknown }).applicationConfig,
  });
  await app.listen();
  let draining = false;
  let health: HealthHttpServer | undefined;
  let checks: HealthCheck[] = [];
  // Looked up only where used: Nest reports a missing provider through its exception zone, which
  // ends a service booted without a health port that provides none (the tests' small services).
  if (options.healthPort !== undefined || options.queueMembership !== undefined) {
    try {
      checks = app.get<HealthCheck[]>(HEALTH_CHECKS, { strict: false });
    } catch {
      // a service without dependencies to check provides none
    }
  }
  // Looked up only when named: a missing provider ends the process (Nest's exception zone, above).
  const listenerType = options.queueMembership?.listener;
  const listener = listenerType ? app.get(listenerType, { strict: false }) : undefined;
  const membership = options.queueMembership && checks.length > 0 ? keepQueueMembershipHealthy(server, checks, logger, options.queueMembership, listener) : undefined;
  if (options.healthPort !== undefined) {
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
        membership?.stop();
        try {
          await options.drainBeforeClose?.(app).catch((err: unknown) => logger.error({ err }, 'drain before close failed'));
          await app.close();
        } finally {
          await health?.close();
          // The spans of the last requests go out before the process exits.
          await stopTracing();
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
