import { randomUUID } from 'node:crypto';
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { replyEnvelope, type RpcEntry, type WireError, type RequestOf, type ReplyOf } from '@drael/contracts';
import { compiledCheck, type SchemaCheck } from '@drael/schema-check';
import { currentRequestId, newRequestId } from '@drael/logger';
import { inSpan, type TraceSpan } from '@drael/tracing';
import { connectNats, type NatsSecurity } from './nats-security.js';
import { badRequestOf, RpcError } from './rpc-error.js';
import { outcomeOf, trackClientRequest } from './rpc.metrics.js';
import { REQUEST_ID_HEADER, TRACEPARENT_HEADER, wireSubject } from './subject.js';
import { ReplyInbox } from './reply-inbox.js';
import { isMaxPayloadError } from './bounded-reply.js';
import { askForHeartbeats, DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_LIVENESS_MS, heartbeatReplica, isHeartbeat, SILENCE_LIMIT_FACTOR } from './heartbeat.js';

export interface RpcClientOptions {
  servers: string | string[];
  /** Installation prefix for every subject (see DRAEL_NATS_PREFIX). */
  prefix?: string;
  /** Shown in the NATS server's connection list. */
  name?: string;
  /** Credentials and TLS (NATS_CREDS_FILE, NATS_TLS_CA_FILE, ...): an app passes its parsed config. */
  security?: NatsSecurity;
  /**
   * A request that may wait longer than `livenessMs` asks its serving replica for a heartbeat every
   * `heartbeatIntervalMs` and fails with `unavailable` (reason `replica_lost`) after `livenessMs`
   * of silence (heartbeat.ts). Defaults: 1 s and 4 s, so a caller learns within 5 s that its replica died.
   */
  heartbeatIntervalMs?: number;
  livenessMs?: number;
}

export interface RequestOptions {
  timeoutMs?: number;
  /** A routed copy of the subject (`<subject>.<route>`): only replicas that declared the route answer (DrainingNatsServerOptions.routes). */
  route?: string;
  requestId?: string;
  signal?: AbortSignal;
}

/** Nest's NATS wire format, which the services' @nestjs/microservices servers speak. */
interface NestReplyPacket {
  id?: string;
  response?: unknown;
  err?: unknown;
  isDisposed?: boolean;
}

const encoder = new TextEncoder();
/** Only names the liveness probe in its (never surfaced) transport errors. */
const PROBE = { subject: '$SRV.PING', service: 'gateway' } as unknown as RpcEntry;
/** Each entry's reply check: its envelope, compiled where the schema allows (compiled-check.ts). */
const envelopes = new WeakMap<RpcEntry, SchemaCheck<{ result: unknown } | { error: WireError }>>();
/** Each entry's request check, made the same way (the service checks the request again with its own). */
const requests = new WeakMap<RpcEntry, SchemaCheck<unknown>>();

/**
 * The typed NATS client. `request(entry, payload)` validates the payload against the entry's
 * request schema before sending and the reply against its reply schema after, applies the
 * entry's timeout, carries the request id and the W3C `traceparent` (when tracing is on, from
 * this request's client span) in NATS headers, and turns an error reply into an RpcError.
 *
 * It speaks Nest's packet format on a plain NATS request rather than going through Nest's
 * ClientProxy: a request then gets NATS's immediate "no responders" answer when a service is
 * down (Nest's client waits for the whole timeout), and no subscription is made per request.
 */
export class NatsRpcClient {
  private constructor(
    readonly connection: NatsConnection,
    private readonly prefix: string,
    private readonly heartbeatIntervalMs: number,
    private readonly livenessMs: number,
  ) {
    this.replyInbox = new ReplyInbox(connection);
    void this.countReconnects();
  }

  /** Where watched requests (requestWatched) hear their heartbeats and replies: one subscription for all of them. */
  private readonly replyInbox: ReplyInbox;

  /** How many times the connection came back after losing the server (see requestWatched). */
  private reconnects = 0;

  private async countReconnects(): Promise<void> {
    for await (const s of this.connection.status()) if (s.type === 'reconnect') this.reconnects++;
  }

  static async connect(options: RpcClientOptions): Promise<NatsRpcClient> {
    const connection = await connectNats({
      servers: options.servers,
      name: options.name,
      security: options.security,
      // nats.js builds two Error objects (stack traces) per request only to decorate a failure;
      // request() turns every failure into an RpcError and drops that stack, so skip the cost.
      noAsyncTraces: true,
    });
    return new NatsRpcClient(connection, options.prefix ?? '', options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS, options.livenessMs ?? DEFAULT_LIVENESS_MS);
  }

  get isConnected(): boolean {
    return !this.connection.isClosed();
  }

  /** One request in a client span named after its subject (the service's server span is its child), counted by subject and outcome. */
  request<E extends RpcEntry>(entry: E, payload: RequestOf<E>, options: RequestOptions = {}): Promise<ReplyOf<E>> {
    return inSpan(entry.subject, { kind: 'client', attributes: { 'rpc.system': 'nats', 'rpc.service': entry.service } }, async (span) => {
      const settled = trackClientRequest(entry.subject);
      try {
        const reply = await this.send(entry, payload, options, span);
        settled('ok');
        return reply;
      } catch (err) {
        settled(outcomeOf(err));
        throw err;
      }
    });
  }

  private async send<E extends RpcEntry>(entry: E, payload: RequestOf<E>, options: RequestOptions, span: TraceSpan): Promise<ReplyOf<E>> {
    let requestCheck = requests.get(entry);
    if (!requestCheck) {
      requestCheck = compiledCheck(entry.request);
      requests.set(entry, requestCheck);
    }
    const parsed = requestCheck.safeParse(payload);
    if (!parsed.success) throw badRequestOf(parsed.error);
    // The request's own bound (a run's timeout_s plus slack) unless the caller set one.
    const timeoutMs = options.timeoutMs ?? entry.timeoutFor?.(parsed.data) ?? entry.timeoutMs;
    try {
      return await this.exchange(entry, parsed.data, timeoutMs, options, span);
    } catch (err) {
      // Its replica died mid-request: an idempotent request is sent once more, and the queue group
      // gives it to a live replica (the dead one's subscription went with its connection). Never a
      // request that may have had an effect (a run, a hold, a model call): the catalog says which.
      if (entry.idempotent === true && isReplicaLost(err) && !options.signal?.aborted) {
        return this.exchange(entry, parsed.data, timeoutMs, options, span);
      }
      throw err;
    }
  }

  private async exchange<E extends RpcEntry>(entry: E, data: unknown, timeoutMs: number, options: RequestOptions, span: TraceSpan): Promise<ReplyOf<E>> {
    if (options.signal?.aborted) throw new RpcError('timeout', `${serviceOf(entry)}: aborted by the caller`, true, { subject: entry.subject });

    const headers = natsHeaders();
    headers.set(REQUEST_ID_HEADER, options.requestId ?? currentRequestId() ?? newRequestId());
    if (span.traceparent) headers.set(TRACEPARENT_HEADER, span.traceparent);
    const packet = { pattern: entry.subject, data, id: randomUUID() };

    let raw: NestReplyPacket;
    const body = encoder.encode(JSON.stringify(packet));
    const subject = options.route ? `${wireSubject(entry.subject, this.prefix)}.${options.route}` : wireSubject(entry.subject, this.prefix);
    try {
      let msg: Msg;
      if (timeoutMs > this.livenessMs) {
        // Long enough that a dead replica would hold the caller: watched by heartbeats.
        msg = await this.requestWatched(entry, subject, body, headers, timeoutMs, options.signal);
      } else {
        const pending = this.connection.request(subject, body, { timeout: timeoutMs, headers });
        msg = await (options.signal ? raceAbort(pending, options.signal, entry) : pending);
      }
      raw = msg.json<NestReplyPacket>();
    } catch (err) {
      if (isMaxPayloadError(err)) throw payloadTooLarge(body.byteLength, this.connection.info?.max_payload);
      throw toTransportError(err, entry, timeoutMs);
    }

    if (raw.err !== undefined && raw.err !== null) {
      throw new RpcError('unavailable', `${serviceOf(entry)}: ${typeof raw.err === 'string' ? raw.err : 'service error'}`, true, { subject: entry.subject });
    }
    let envelopeCheck = envelopes.get(entry);
    if (!envelopeCheck) {
      envelopeCheck = compiledCheck(replyEnvelope(entry.reply));
      envelopes.set(entry, envelopeCheck);
    }
    const envelope = envelopeCheck.safeParse(raw.response);
    if (!envelope.success) {
      throw new RpcError('internal', `${serviceOf(entry)}: reply does not match its schema: ${envelope.error.issues[0]?.message}`, false, { subject: entry.subject });
    }
    if ('error' in envelope.data) throw RpcError.fromWire(envelope.data.error);
    return envelope.data.result as ReplyOf<E>;
  }

  /**
   * One request on an inbox of its own, asking the serving replica for heartbeats: the reply
   * resolves it; `timeoutMs` bounds it whatever the heartbeats say. After `livenessMs` with no
   * heartbeat at all, no replica took it (it went to one that was dying): `replica_lost`
   * (`unclaimed`) at once. After `livenessMs` without a further heartbeat the caller asks NATS
   * whether the replica that sent the last one is still connected:
   * "no responders" (it died) rejects with `replica_lost` at once; otherwise (alive but slow) it
   * keeps waiting, up to SILENCE_LIMIT_FACTOR windows of silence. NATS's "no responders" status
   * on the request itself answers at once, as for a plain request.
   */
  private requestWatched(entry: RpcEntry, subject: string, body: Uint8Array, headers: MsgHdrs, timeoutMs: number, signal?: AbortSignal): Promise<Msg> {
    askForHeartbeats(headers, this.heartbeatIntervalMs);
    return new Promise<Msg>((resolve, reject) => {
      let liveness: NodeJS.Timeout | undefined;
      let done = false;
      let replica: string | undefined;
      // A heartbeat came: some replica took the request (an unnamed beat names none).
      let taken = false;
      let lastHeard = Date.now();
      const reconnectsAtSend = this.reconnects;
      const finish = (settle: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(liveness);
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
        inbox.close();
        settle();
      };
      const check = async () => {
        if (done) return;
        const silentMs = Date.now() - lastHeard;
        if (silentMs >= this.livenessMs * SILENCE_LIMIT_FACTOR) return finish(() => reject(replicaLost(entry, silentMs, 'silence_limit')));
        // Sent, never taken by any replica, and the connection to NATS was lost since: the request
        // most likely went down with the server it was sent to. Nobody can have acted on it.
        if (replica === undefined && this.reconnects !== reconnectsAtSend) return finish(() => reject(replicaLost(entry, silentMs, 'lost_in_reconnect')));
        if (!taken) {
          // Unclaimed: no replica ever said it took it. A live one beats within a quarter of its
          // beat interval (heartbeat.ts), even when slow, so a whole liveness window of silence means
          // the message went to a replica that was dying, still unread in its socket, with no name
          // to ask NATS about (the chaos runs saw a fetch wait 20 s and a chat 21 s for the silence
          // limit). Beats already on the socket are read first (a caller whose own loop was blocked
          // has its timers run before its I/O).
          await new Promise((r) => setImmediate(r));
          if (done) return;
          if (!taken) return finish(() => reject(replicaLost(entry, Date.now() - lastHeard, 'unclaimed')));
        }
        if (replica !== undefined && (await this.replicaGone(replica))) return finish(() => reject(replicaLost(entry, Date.now() - lastHeard, 'left_nats')));
        if (!done) liveness = setTimeout(() => void check(), this.heartbeatIntervalMs);
      };
      const watch = () => {
        clearTimeout(liveness);
        liveness = setTimeout(() => void check(), this.livenessMs);
      };
      const onAbort = () => finish(() => reject(new RpcError('timeout', `${serviceOf(entry)}: aborted by the caller`, true, { subject: entry.subject })));
      const inbox = this.replyInbox.open((err, msg) => {
        if (err || !msg) return finish(() => reject(err ?? new Error('reply inbox closed')));
        if (isHeartbeat(msg)) {
          replica = heartbeatReplica(msg) ?? replica;
          taken = true;
          lastHeard = Date.now();
          return watch();
        }
        if (msg.data.length === 0 && msg.headers?.code === 503) {
          return finish(() => reject(new RpcError('unavailable', `${serviceOf(entry)} is not answering`, true, { subject: entry.subject, reason: 'no_responders' })));
        }
        finish(() => resolve(msg));
      });
      const deadline = setTimeout(
        () => finish(() => reject(new RpcError('timeout', `${serviceOf(entry)}: no reply within ${timeoutMs} ms`, true, { subject: entry.subject }))),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      watch();
      try {
        // The inbox's SUB went out before this PUB on the same connection: the reply cannot miss it.
        this.connection.publish(subject, body, { reply: inbox.subject, headers });
      } catch (err) {
        finish(() => reject(err instanceof Error ? err : new Error(String(err))));
      }
    });
  }

  /**
   * Whether the replica `<service>.<id>` has left NATS: its micro registration answers
   * `$SRV.PING.<service>.<id>` while its connection lives, and NATS says "no responders" at once
   * when it does not. A slow answer or none (a busy replica) is not taken as gone.
   */
  private async replicaGone(replica: string): Promise<boolean> {
    try {
      await this.connection.request(`$SRV.PING.${replica}`, undefined, { timeout: Math.min(this.livenessMs, 2_000) });
      return false;
    } catch (err) {
      return toTransportError(err, PROBE, 0).details?.reason === 'no_responders';
    }
  }

  async close(): Promise<void> {
    if (!this.connection.isClosed()) await this.connection.drain();
  }
}

/**
 * How a failure names where it happened. Messages of these errors reach API clients (the gateway
 * passes them on), so they name the service, never an internal subject; the subject is in
 * `details.subject` for logs.
 */
function serviceOf(entry: RpcEntry): string {
  return `the ${entry.service} service`;
}

function raceAbort<T>(pending: Promise<T>, signal: AbortSignal, entry: RpcEntry): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new RpcError('timeout', `${serviceOf(entry)}: aborted by the caller`, true, { subject: entry.subject }));
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * A request that cannot travel as one NATS message: a typed, non-retryable error stating the
 * limit (the gateway answers 413), never a 503 naming an internal subject.
 */
function payloadTooLarge(bytes: number, limit: number | undefined): RpcError {
  const max = limit ?? 0;
  return new RpcError('payload_too_large', `the request is ${bytes} bytes encoded; at most ${max} bytes (less a little for headers) can be sent`, false, {
    limit_bytes: max,
  });
}

/** The serving replica went silent mid-request: typed, retryable, and told apart from a slow reply. */
function replicaLost(entry: RpcEntry, silentMs: number, detectedBy: 'left_nats' | 'silence_limit' | 'lost_in_reconnect' | 'unclaimed'): RpcError {
  const why = {
    left_nats: 'its connection to NATS is gone',
    silence_limit: 'it stays silent',
    lost_in_reconnect: 'no replica took it before NATS was lost',
    unclaimed: 'no replica said it took it',
  }[detectedBy];
  return new RpcError(
    'unavailable',
    `${serviceOf(entry)}: the replica serving this request stopped answering (no heartbeat for ${silentMs} ms, ${why}); it may have died mid-request`,
    true,
    { subject: entry.subject, reason: 'replica_lost', detected_by: detectedBy },
  );
}

export function isReplicaLost(err: unknown): boolean {
  return err instanceof RpcError && err.code === 'unavailable' && err.details?.reason === 'replica_lost';
}

/**
 * The request failed without its answer (none in time, or no replica answering): the work it
 * asked for may still be waiting or under way (or never have arrived). A caller whose request
 * starts work nobody will now read (a sandbox run) cancels it then.
 */
export function isAnswerLost(err: unknown): boolean {
  return err instanceof RpcError && (err.code === 'timeout' || err.code === 'unavailable');
}

function toTransportError(err: unknown, entry: RpcEntry, timeoutMs: number): RpcError {
  if (err instanceof RpcError) return err;
  const e = err as { name?: string; code?: string; message?: string };
  const text = `${e.name ?? ''} ${e.code ?? ''} ${e.message ?? ''}`.toLowerCase();
  const where = { subject: entry.subject };
  if (text.includes('no responders') || text.includes('503')) {
    return new RpcError('unavailable', `${serviceOf(entry)} is not answering`, true, { ...where, reason: 'no_responders' });
  }
  if (text.includes('timeout')) return new RpcError('timeout', `${serviceOf(entry)}: no reply within ${timeoutMs} ms`, true, where);
  return new RpcError('unavailable', `${serviceOf(entry)}: ${e.message ?? 'transport error'}`, true, where);
}
