import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { sandboxCatalog } from '@drael/contracts';
import { createLogger } from '@drael/logger';
import { natsConnectOptions, wireSubject } from '@drael/nats-rpc';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { RunRegistry } from './run-registry.js';
import { SandboxError } from '../sandbox-error.js';

/** Nest's NATS packet, which NatsRpcClient speaks on both ends. */
interface Packet {
  id?: unknown;
  data?: unknown;
}

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
    const connection = await connect({
      servers: this.config.NATS_URL,
      name: 'sandbox-run-cancel',
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      ...natsConnectOptions(this.config),
    });
    this.connection = connection;
    connection.subscribe(wireSubject(sandboxCatalog.runCancel.subject, this.config.DRAEL_NATS_PREFIX), {
      callback: (err, msg) => {
        if (!err) this.onCancel(msg);
      },
    });
    // The subscription is known to the server before the service reports itself listening.
    await connection.flush();
  }

  private onCancel(msg: Msg): void {
    // Every subject is a request: one without a reply subject is not acted on (issue 15, item 9).
    if (!msg.reply) {
      this.logger.warn({ subject: msg.subject }, 'refused a message without a reply subject (not executed)');
      return;
    }
    let body: unknown;
    try {
      body = msg.json<unknown>();
    } catch {
      // Not JSON: answered at once, like every subject (packages/nats-rpc's server does the same).
      this.reply(msg, undefined, { error: new SandboxError('bad_request', 'the body is not JSON', false).toWire() });
      return;
    }
    // Nest's packet (the typed client), or a plain JSON request (any other client): the body itself.
    const packet: Packet =
      typeof body === 'object' && body !== null && (body as Packet & { pattern?: unknown }).pattern === sandboxCatalog.runCancel.subject && typeof (body as Packet).id === 'string'
        ? body
        : { data: body };
    const parsed = sandboxCatalog.runCancel.request.safeParse(packet.data);
    if (!parsed.success) {
      // Every replica answers a malformed cancel the same way; the first answer is the caller's.
      const issue = parsed.error.issues[0];
      this.reply(msg, packet.id, { error: new SandboxError('bad_request', `${issue?.path.join('.') || 'payload'}: ${issue?.message ?? 'invalid'}`, false).toWire() });
      return;
    }
    const { tenant, run_id } = parsed.data;
    if (!this.registry.cancel(tenant, run_id)) return;
    this.logger.info({ run_id }, 'run cancelled');
    this.reply(msg, packet.id, { result: { run_id, cancelled: true } });
  }

  private reply(msg: Msg, id: unknown, response: unknown): void {
    if (!msg.reply) return;
    // A plain request (no packet id) gets the bare envelope.
    msg.respond(JSON.stringify(id === undefined ? response : { id, response, isDisposed: true }));
  }

  async onApplicationShutdown(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (connection && !connection.isClosed()) await connection.drain().catch(() => undefined);
  }
}
