import type { Msg } from '@nats-io/transport-node';
import { RpcError } from './rpc-error.js';

/**
 * The longest packet id a service echoes. Nest's client and NatsRpcClient send a UUID (36); a
 * longer one is refused (bad_request, in the plain form) rather than echoed, since a reply that
 * repeats an unbounded id may not fit in one NATS message.
 */
export const MAX_PACKET_ID_CHARS = 128;

/** The answer to a packet whose id is over MAX_PACKET_ID_CHARS (plain form: the id is not echoed). */
export const PACKET_ID_TOO_LONG = JSON.stringify({
  error: new RpcError('bad_request', `the packet's id is longer than ${MAX_PACKET_ID_CHARS} characters (send a UUID)`, false).toWire(),
});

/** nats.js's refusal, before sending, of a message (headers and body) above the server's max_payload. */
export function isMaxPayloadError(err: unknown): boolean {
  return err instanceof Error && err.message.includes('max_payload');
}

/**
 * Sends a reply (JSON text) to a request, as a packet answering `packetId` or as a plain envelope.
 * A reply that does not fit in one NATS message (a result too large, an error quoting a large
 * input) cannot be sent: nats.js throws from respond(), which left the caller waiting for its
 * timeout and, in a subscription's own callback, ended the subscription (every later request on
 * it unanswered). The caller gets a small `payload_too_large` in its place. A reply that cannot be
 * sent for another reason (the connection is closing) is dropped: the caller's timeout or its
 * replica-loss check answers it.
 */
export function respondBounded(msg: Msg, reply: string, packetId?: string): void {
  try {
    msg.respond(reply);
    return;
  } catch (err) {
    if (!isMaxPayloadError(err)) return;
  }
  const error = new RpcError('payload_too_large', `the reply (${Buffer.byteLength(reply)} bytes) does not fit in one NATS message on this server: ask for less`, false).toWire();
  try {
    msg.respond(JSON.stringify(packetId === undefined ? { error } : { response: { error }, isDisposed: true, id: packetId }));
  } catch {
    // The connection is closing: as above.
  }
}
