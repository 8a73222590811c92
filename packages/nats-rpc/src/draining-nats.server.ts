import { NatsContext, ServerNats } from '@nestjs/microservices';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { isObservable } from 'rxjs';
import { inFlight } from './in-flight.js';
import { queueGroup, wireSubject } from './subject.js';

export interface DrainingNatsServerOptions {
  servers: string | string[];
  service: string;
  prefix: string;
  /** How long shutdown waits for handlers in progress before closing anyway. */
  drainTimeoutMs: number;
}

/** Nest's NATS packet: `{pattern, data, id}` in, `{id, response, isDisposed}` or `{id, err, isDisposed}` out. */
interface RequestPacket {
  id?: string;
  data?: unknown;
}

type NestHandler = (data: unknown, ctx: NatsContext) => Promise<unknown>;

/**
 * Nest's NATS server with three changes: subjects and the queue group carry the installation
 * prefix; close() stops taking work, waits for handlers in flight, then drains the connection
 * (Nest's own close() drops in-flight replies on the floor); and a request whose handler answers
 * with a plain value (every @Handles method does) is answered directly.
 *
 * Why the direct answer: Nest's per-message path parses each subject as JSON first (an exception
 * per message for a plain subject), wraps the result in an rxjs stream, queues the reply on
 * process.nextTick and builds a record through its serializer; on billing's hold/settle that was
 * 13-15 % of the service's CPU per request (docs/decisions/0003-billing-hot-path.md). The handler
 * itself is still Nest's: guards, pipes, interceptors and exception filters run as before, and
 * anything that is not a plain request/reply with a value (an event, an unknown subject, a
 * handler answering with an Observable or an exception filter's stream) goes through Nest's own
 * path unchanged. The bytes on the wire are the same as Nest's.
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
    for (const [channel, handler] of this.messageHandlers) {
      this.subs.push(
        client.subscribe(wireSubject(channel, this.drainOptions.prefix), {
          queue,
          callback: (err, msg) => {
            if (err) {
              this.logger.error(err);
              return;
            }
            this.answer(channel, handler as NestHandler, msg).catch((e: unknown) => this.handleError(e as string));
          },
        }),
      );
    }
  }

  private async answer(channel: string, handler: NestHandler, msg: Msg): Promise<void> {
    let packet: RequestPacket;
    try {
      packet = msg.json<RequestPacket>();
    } catch {
      packet = {};
    }
    // Events (no id), fire-and-forget messages and undecodable packets: Nest's path as before.
    if (typeof packet.id !== 'string' || !msg.reply) return this.handleMessage(channel, msg);
    const result = await handler(packet.data, new NatsContext([msg.subject, msg.headers]));
    if (isObservable(result)) {
      // A stream (an interceptor's, or the exception filter's error): Nest sends it the way it always has.
      const id = packet.id;
      const publish = (response: object) => {
        msg.respond(JSON.stringify({ ...response, id }));
      };
      this.send(result, publish);
      return;
    }
    // What Nest's send() writes for a single value: the value and the end of the stream in one packet.
    msg.respond(JSON.stringify({ response: result, isDisposed: true, id: packet.id }));
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
