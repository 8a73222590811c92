import { ServerNats } from '@nestjs/microservices';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { inFlight } from './in-flight.js';
import { queueGroup, wireSubject } from './subject.js';

export interface DrainingNatsServerOptions {
  servers: string | string[];
  service: string;
  prefix: string;
  /** How long shutdown waits for handlers in progress before closing anyway. */
  drainTimeoutMs: number;
}

/**
 * Nest's NATS server with two changes: subjects and the queue group carry the installation
 * prefix, and close() stops taking work, waits for handlers in flight, then drains the
 * connection (Nest's own close() drops in-flight replies on the floor).
 */
export class DrainingNatsServer extends ServerNats {
  private readonly subs: Subscription[] = [];
  private client?: NatsConnection;

  constructor(private readonly drainOptions: DrainingNatsServerOptions) {
    super({ servers: drainOptions.servers, name: drainOptions.service, maxReconnectAttempts: -1 });
  }

  override bindEvents(client: NatsConnection): void {
    this.client = client;
    const queue = queueGroup(this.drainOptions.service, this.drainOptions.prefix);
    for (const channel of this.messageHandlers.keys()) {
      const handler = (this as unknown as { getMessageHandler(c: string): (err: unknown, msg: unknown) => Promise<unknown> }).getMessageHandler(channel);
      this.subs.push(
        client.subscribe(wireSubject(channel, this.drainOptions.prefix), {
          queue,
          callback: (err, msg) => void handler.call(this, err, msg),
        }),
      );
    }
  }

  get connection(): NatsConnection | undefined {
    return this.client;
  }

  override async close(): Promise<void> {
    for (const sub of this.subs.splice(0)) sub.unsubscribe();
    await inFlight.idle(this.drainOptions.drainTimeoutMs);
    if (this.client && !this.client.isClosed()) await this.client.drain();
    await super.close();
  }
}
