import { headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/transport-node';

/**
 * Liveness of the replica serving a long request (issue 19, item 2). The caller asks for
 * heartbeats with this header (its value: the interval it wants, in ms); the serving replica then
 * sends an empty message carrying the header to the request's reply subject a quarter of the
 * interval after its handler started and every interval until it answers (none if it answers
 * sooner). A caller that hears nothing for its liveness
 * window knows the replica is gone (killed, partitioned, frozen) and fails at once with a typed,
 * retryable `unavailable` instead of waiting for the request's whole timeout.
 *
 * A heartbeat names the replica (`<service>.<micro id>`), so that a caller who hears nothing asks
 * NATS whether that replica is still connected (`$SRV.PING.<service>.<id>`): "no responders" means
 * its connection is gone (killed, crashed) and the caller fails at once; an answer or a silence
 * means it is alive but slow (a blocked event loop on a loaded machine), and the caller keeps
 * waiting, up to SILENCE_LIMIT_FACTOR liveness windows of silence in all. A request that no replica
 * ever heartbeated for names nobody to ask: a live replica beats within a quarter of the interval
 * of its handler's start (far less than one window), so it fails after one window (rpc-client.ts,
 * `unclaimed`).
 *
 * Opt-in, so a caller that does not ask (a plain request from another language, Nest's
 * ClientProxy) only ever receives the one reply it expects. All heartbeat header handling is in
 * this file, on both ends.
 */
export const HEARTBEAT_HEADER = 'drael-heartbeat';

/** Bounds on the interval a caller may ask for: not a flood, not so rare that liveness means nothing. */
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 10_000;

/** Defaults: one beat a second; four silent seconds mean the replica is gone (spec: a caller learns within 5 s). */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 1_000;
export const DEFAULT_LIVENESS_MS = 4_000;
/** The first beat waits this fraction of the interval (startHeartbeats). */
const HEARTBEAT_GRACE_FRACTION = 0.25;
/** Silence this many liveness windows long fails the request even when NATS still sees the replica (a frozen or partitioned one). */
export const SILENCE_LIMIT_FACTOR = 5;

/** Caller side: the replica a heartbeat names (`<service>.<id>`), if it names one. */
export function heartbeatReplica(msg: Msg): string | undefined {
  const v = msg.headers?.get(HEARTBEAT_HEADER);
  return v && v !== '1' ? v : undefined;
}

/** Caller side: ask the serving replica for heartbeats every `intervalMs`. */
export function askForHeartbeats(headers: MsgHdrs, intervalMs: number): void {
  headers.set(HEARTBEAT_HEADER, String(intervalMs));
}

/** Caller side: is this message on the reply subject a heartbeat (not the reply)? */
export function isHeartbeat(msg: Msg): boolean {
  return msg.headers?.has(HEARTBEAT_HEADER) === true;
}

/**
 * Serving side: when the request asks for heartbeats, send the first one a grace of a quarter of
 * the interval after the handler starts (HEARTBEAT_GRACE_FRACTION), then one every interval after
 * it until the returned stop() is called (after the reply is sent). No-op otherwise.
 *
 * Why a grace: most requests that ask (every search, a fetch, a health check: their timeouts are
 * above the caller's liveness window) are answered within it, and a beat sent at once cost each
 * of them a message more through nats-server and a wake-up of the caller while it waits
 * (bench/search/README.md). An answer sent within the grace goes without any beat: the caller has
 * its answer. Liveness is not weakened: the silence before the first beat (a quarter of the
 * interval) is shorter than the silence between two beats, and a replica that dies within the
 * grace leaves its caller with no beat at all, which the caller's unclaimed rule (rpc-client.ts)
 * fails typed and retryable after one liveness window, the same bound as for a replica that dies
 * later.
 */
export function startHeartbeats(msg: Msg, replica?: string): () => void {
  const asked = Number(msg.headers?.get(HEARTBEAT_HEADER));
  if (!msg.reply || !Number.isFinite(asked) || asked <= 0) return () => {};
  const intervalMs = Math.min(Math.max(asked, MIN_INTERVAL_MS), MAX_INTERVAL_MS);
  const beat = () => {
    const h = natsHeaders();
    h.set(HEARTBEAT_HEADER, replica ?? '1');
    try {
      msg.respond(new Uint8Array(0), { headers: h });
    } catch {
      // The connection is closing: the caller learns it from the silence.
    }
  };
  // One timer per request until the first beat: most requests are answered before it, and the
  // interval is made only for those that are not. A pending beat never keeps a process alive that
  // is otherwise done (unref).
  let every: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    beat();
    every = setInterval(beat, intervalMs).unref();
  }, intervalMs * HEARTBEAT_GRACE_FRACTION).unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
