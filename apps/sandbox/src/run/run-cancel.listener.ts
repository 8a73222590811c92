import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { sandboxCatalog } from '@drael/contracts';
import { createLogger } from '@drael/logger';
import { badRequestOf, MAX_PACKET_ID_CHARS, natsConnectOptions, PACKET_ID_TOO_LONG, respondBounded, wireSubject } from '@drael/nats-rpc';
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
  /** Messages refused for want of a reply subject, for the log's throttle. */
  private refusedLogged = 0;
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
        if (err) return;
        // Nothing may escape into nats.js's callback: an exception there ends the subscription,
        // and no cancel would reach this replica again.
        try {
          this.onCancel(msg);
        } catch (failure) {
          this.logger.error({ err: failure }, 'cancel listener failed on a message');
        }
      },
    });
    // The subscription is known to the server before the service reports itself listening.
    await connection.flush();
  }

  private onCancel(msg: Msg): void {
    // Every subject is a request: one without a reply subject is not acted on (issue 15, item 9);
    // logged as the other subjects' are, the first ten and then every thousandth.
    if (!msg.reply) {
      this.refusedLogged++;
      if (this.refusedLogged <= 10 || this.refusedLogged % 1000 === 0) {
        this.logger.warn({ subject: msg.subject, refused: this.refusedLogged }, 'refused a message without a reply subject (not executed)');
      }
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
    if (typeof packet.id === 'string' && packet.id.length > MAX_PACKET_ID_CHARS) {
      msg.respond(PACKET_ID_TOO_LONG);
      return;
    }
    const parsed = sandboxCatalog.runCancel.request.safeParse(packet.data);
    if (!parsed.success) {
      // Every replica answers a malformed cancel the same way; the first answer is the caller's.
      this.reply(msg, packet.id, { error: badRequestOf(parsed.error).toWire() });
      return;
    }
    const { tenant, run_id } = parsed.data;
    if (!this.registry.cancel(tenant, run_id)) return;
    this.logger.info({ run_id }, 'run cancelled');
    this.reply(msg, packet.id, { result: { run_id, cancelled: true } });
  }

  private reply(msg: Msg, id: unknown, response: unknown): void {
    if (!msg.reply) return;
    // A plain request (no packet id) gets the bare envelope. Bounded: a reply that does not fit in
    // one NATS message must not throw here, in the subscription's callback, which would end it.
    const packetId = typeof id === 'string' ? id : undefined;
    respondBounded(msg, JSON.stringify(packetId === undefined ? response : { id: packetId, response, isDisposed: true }), packetId);
  }

  async onApplicationShutdown(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (connection && !connection.isClosed()) await connection.drain().catch(() => undefined);
  }
}
