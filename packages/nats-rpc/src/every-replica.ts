import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { ParsedRequestOf, ReplyOf, RpcEntry } from '@drael/contracts';
import { MAX_PACKET_ID_CHARS, PACKET_ID_TOO_LONG, respondBounded } from './bounded-reply.js';
import { RpcError, badRequestOf } from './rpc-error.js';
import { wireSubject } from './subject.js';

/** Nest's NATS packet, which NatsRpcClient speaks on both ends. */
interface Packet {
  id?: unknown;
  data?: unknown;
}

/** What a replica makes of one message of an `every-replica` subject. */
export interface EveryReplicaHandler<E extends RpcEntry> {
  /**
   * This replica's part: its answer, or undefined to stay silent (another replica's answer is the
   * caller's). Runs in nats.js's callback: it must be quick and must not wait.
   */
  act(request: ParsedRequestOf<E>): ReplyOf<E> | undefined;
  /** Told of a message refused for want of a reply subject (logged by the caller, throttled). */
  onRefused?(subject: string, refused: number): void;
  /** Told of an exception `act` threw; the subscription goes on. */
  onError?(err: unknown): void;
}

/**
 * Subscribes to a subject delivered to every replica (`delivery: 'every-replica'`): a plain
 * subscription outside the queue group, so every replica of the service hears every message.
 * It speaks the wire as the queue-group server does: a message without a reply subject is not
 * acted on (every subject is a request); a body that is not JSON, or that the entry's request
 * schema refuses, gets `bad_request` (every replica answers it alike; the first answer is the
 * caller's); Nest's packet and a plain JSON request are both understood; a packet id over
 * MAX_PACKET_ID_CHARS is refused; the reply is bounded to one NATS message.
 *
 * Nothing escapes into nats.js's callback: an exception there would end the subscription, and no
 * later message would reach this replica.
 */
export function listenOnEveryReplica<E extends RpcEntry>(connection: NatsConnection, entry: E, prefix: string, handler: EveryReplicaHandler<E>): Subscription {
  if (entry.delivery !== 'every-replica') throw new Error(`${entry.subject} is answered by one replica of its queue group, not by every replica`);
  let refused = 0;
  return connection.subscribe(wireSubject(entry.subject, prefix), {
    callback: (err, msg) => {
      if (err) return;
      try {
        if (!msg.reply) {
          handler.onRefused?.(msg.subject, ++refused);
          return;
        }
        onMessage(entry, msg, handler);
      } catch (failure) {
        handler.onError?.(failure);
      }
    },
  });
}

function onMessage<E extends RpcEntry>(entry: E, msg: Msg, handler: EveryReplicaHandler<E>): void {
  let body: unknown;
  try {
    body = msg.json<unknown>();
  } catch {
    reply(msg, undefined, { error: new RpcError('bad_request', 'the body is not JSON', false).toWire() });
    return;
  }
  // Nest's packet (the typed client), or a plain JSON request (any other client): the body itself.
  const packet: Packet =
    typeof body === 'object' && body !== null && (body as Packet & { pattern?: unknown }).pattern === entry.subject && typeof (body as Packet).id === 'string'
      ? body
      : { data: body };
  if (typeof packet.id === 'string' && packet.id.length > MAX_PACKET_ID_CHARS) {
    msg.respond(PACKET_ID_TOO_LONG);
    return;
  }
  const parsed = entry.request.safeParse(packet.data);
  if (!parsed.success) {
    reply(msg, packet.id, { error: badRequestOf(parsed.error).toWire() });
    return;
  }
  const result = handler.act(parsed.data as ParsedRequestOf<E>);
  if (result !== undefined) reply(msg, packet.id, { result });
}

function reply(msg: Msg, id: unknown, response: unknown): void {
  // A plain request (no packet id) gets the bare envelope.
  const packetId = typeof id === 'string' ? id : undefined;
  respondBounded(msg, JSON.stringify(packetId === undefined ? response : { id: packetId, response, isDisposed: true }), packetId);
}
