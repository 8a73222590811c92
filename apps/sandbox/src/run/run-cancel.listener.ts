import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { sandboxCatalog } from '@drael/contracts';
import { createLogger } from '@drael/logger';
import { connectNats, listenOnEveryReplica } from '@drael/nats-rpc';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { RunRegistry } from './run-registry.js';

/**
 * sandbox.run.cancel.v1 as a broadcast. A run is taken by ONE replica of the queue group, so a
 * cancel sent through the queue group would reach a replica that is not running it about as often
 * as there are replicas. Here every replica subscribes without a queue group: every one hears the
 * cancel, and only the one running the run kills it and answers `{cancelled: true}`; the others
 * stay silent (a reply from them would race the owner's). A cancel nobody owns therefore gets no
 * answer, and its caller's request times out: callers treat it as fire-and-forget.
 *
 * Its own connection: it stays subscribed while the service drains on SIGTERM (runs in flight
 * can still be stopped), and closes after the queue-group server has finished.
 */
@Injectable()
export class RunCancelListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private connection?: NatsConnection;
  private started?: Promise<void>;
  private readonly logger;

  constructor(
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
    private readonly registry: RunRegistry,
  ) {
    this.logger = createLogger('sandbox', config.LOG_LEVEL);
  }

  // Nest may run bootstrap hooks again when the microservice starts listening; subscribe once.
  onApplicationBootstrap(): Promise<void> {
    this.started ??= this.start();
    return this.started;
  }

  private async start(): Promise<void> {
    const connection = await connectNats({ servers: this.config.NATS_URL, name: 'sandbox-run-cancel', security: this.config });
    this.connection = connection;
    listenOnEveryReplica(connection, sandboxCatalog.runCancel, this.config.DRAEL_NATS_PREFIX, {
      act: ({ tenant, run_id }) => {
        if (!this.registry.cancel(tenant, run_id)) return undefined;
        this.logger.info({ run_id }, 'run cancelled');
        return { run_id, cancelled: true };
      },
      // Every subject is a request: one without a reply subject is not acted on (issue 15, item 9);
      // logged as the other subjects' are, the first ten and then every thousandth.
      onRefused: (subject, refused) => {
        if (refused <= 10 || refused % 1000 === 0) this.logger.warn({ subject, refused }, 'refused a message without a reply subject (not executed)');
      },
      onError: (failure) => this.logger.error({ err: failure }, 'cancel listener failed on a message'),
    });
    // The subscription is known to the server before the service reports itself listening.
    await connection.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (connection && !connection.isClosed()) await connection.drain().catch(() => undefined);
  }
}
