import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** Called with each message on one request's reply subject, or once with the error that ended the inbox. */
export type ReplyListener = (err: Error | null, msg?: Msg) => void;

/** One request's reply subject; close() when the request is settled. */
export interface ReplySlot {
  readonly subject: string;
  close(): void;
}

/**
 * The one subscription (`<inbox>.*`) on which every watched request of a client (rpc-client.ts,
 * requestWatched) receives its heartbeats and its reply, each request on a reply subject of its
 * own (`<inbox>.<n>`). A subscription per request cost the caller a SUB and an UNSUB per request
 * (the UNSUB written on the reply's path, before the caller's code resumed) and nats-server a
 * change to its subject index for each; nats.js multiplexes its own request() the same way.
 *
 * The subscription is made on first use, before the first request is published on the same
 * connection, so no reply can arrive before it; nats.js renews it after a reconnect. If it ends
 * with an error, every request waiting on it fails with that error and the next one subscribes
 * afresh.
 */
export class ReplyInbox {
  private readonly listeners = new Map<string, ReplyListener>();
  private subscription: Subscription | undefined;
  private prefix = '';
  private sequence = 0;

  constructor(private readonly connection: NatsConnection) {}

  open(listener: ReplyListener): ReplySlot {
    if (!this.subscription) this.subscribe();
    const token = String(++this.sequence);
    this.listeners.set(token, listener);
    return { subject: `${this.prefix}.${token}`, close: () => this.listeners.delete(token) };
  }

  private subscribe(): void {
    const prefix = createInbox();
    const subscription = this.connection.subscribe(`${prefix}.*`, {
      callback: (err, msg) => {
        if (err) {
          if (this.subscription === subscription) this.subscription = undefined;
          const waiting = [...this.listeners.values()];
          this.listeners.clear();
          for (const listener of waiting) listener(err);
          return;
        }
        this.listeners.get(msg.subject.slice(prefix.length + 1))?.(null, msg);
      },
    });
    this.prefix = prefix;
    this.subscription = subscription;
  }
}
