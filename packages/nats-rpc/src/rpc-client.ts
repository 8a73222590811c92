import { randomUUID } from 'node:crypto';
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { replyEnvelope, type RpcEntry, type RequestOf, type ReplyOf } from '@drael/contracts';
import { currentRequestId, newRequestId } from '@drael/logger';
import { inSpan, type TraceSpan } from '@drael/tracing';
import { natsConnectOptions, type NatsSecurity } from './nats-security.js';
import { RpcError } from './rpc-error.js';
import { outcomeOf, trackClientRequest } from './rpc.metrics.js';
import { REQUEST_ID_HEADER, TRACEPARENT_HEADER, wireSubject } from './subject.js';

export interface RpcClientOptions {
  servers: string | string[];
  /** Installation prefix for every subject (see DRAEL_NATS_PREFIX). */
  prefix?: string;
  /** Shown in the NATS server's connection list. */
  name?: string;
  /** Credentials and TLS (NATS_CREDS_FILE, NATS_TLS_CA_FILE, ...): an app passes its parsed config. */
  security?: NatsSecurity;
}

export interface RequestOptions {
  timeoutMs?: number;
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
const envelopes = new WeakMap<RpcEntry, ReturnType<typeof replyEnvelope>>();

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
  ) {}

  static async connect(options: RpcClientOptions): Promise<NatsRpcClient> {
    const connection = await connect({
      servers: options.servers,
      name: options.name,
      ...natsConnectOptions(options.security),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // nats.js builds two Error objects (stack traces) per request only to decorate a failure;
      // request() turns every failure into an RpcError and drops that stack, so skip the cost.
      noAsyncTraces: true,
    });
    return new NatsRpcClient(connection, options.prefix ?? '');
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
    const parsed = entry.request.safeParse(payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new RpcError('bad_request', `${issue?.path.join('.') || 'payload'}: ${issue?.message ?? 'invalid'}`, false, {
        param: issue?.path.join('.') || null,
      });
    }
    if (options.signal?.aborted) throw new RpcError('timeout', `${serviceOf(entry)}: aborted by the caller`, true, { subject: entry.subject });

    const headers = natsHeaders();
    headers.set(REQUEST_ID_HEADER, options.requestId ?? currentRequestId() ?? newRequestId());
    if (span.traceparent) headers.set(TRACEPARENT_HEADER, span.traceparent);
    const packet = { pattern: entry.subject, data: parsed.data, id: randomUUID() };
    const timeoutMs = options.timeoutMs ?? entry.timeoutMs;

    let raw: NestReplyPacket;
    const body = encoder.encode(JSON.stringify(packet));
    try {
      const pending = this.connection.request(wireSubject(entry.subject, this.prefix), body, {
        timeout: timeoutMs,
        headers,
      });
      const msg = await (options.signal ? raceAbort(pending, options.signal, entry) : pending);
      raw = msg.json<NestReplyPacket>();
    } catch (err) {
      if (isMaxPayloadError(err)) throw payloadTooLarge(body.byteLength, this.connection.info?.max_payload);
      throw toTransportError(err, entry, timeoutMs);
    }

    if (raw.err !== undefined && raw.err !== null) {
      throw new RpcError('unavailable', `${serviceOf(entry)}: ${typeof raw.err === 'string' ? raw.err : 'service error'}`, true, { subject: entry.subject });
    }
    let envelopeSchema = envelopes.get(entry);
    if (!envelopeSchema) {
      envelopeSchema = replyEnvelope(entry.reply);
      envelopes.set(entry, envelopeSchema);
    }
    const envelope = envelopeSchema.safeParse(raw.response);
    if (!envelope.success) {
      throw new RpcError('internal', `${serviceOf(entry)}: reply does not match its schema: ${envelope.error.issues[0]?.message}`, false, { subject: entry.subject });
    }
    if ('error' in envelope.data) throw RpcError.fromWire(envelope.data.error);
    return envelope.data.result as ReplyOf<E>;
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

/** nats.js refuses, before sending, a message (headers and body) above the server's max_payload. */
function isMaxPayloadError(err: unknown): boolean {
  return err instanceof Error && err.message.includes('max_payload');
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

function toTransportError(err: unknown, entry: RpcEntry, timeoutMs: number): RpcError {
  if (err instanceof RpcError) return err;
  const e = err as { name?: string; code?: string; message?: string };
  const text = `${e.name ?? ''} ${e.code ?? ''} ${e.message ?? ''}`.toLowerCase();
  const where = { subject: entry.subject };
  if (text.includes('no responders') || text.includes('503')) {
    return new RpcError('unavailable', `${serviceOf(entry)} is not answering`, true, where);
  }
  if (text.includes('timeout')) return new RpcError('timeout', `${serviceOf(entry)}: no reply within ${timeoutMs} ms`, true, where);
  return new RpcError('unavailable', `${serviceOf(entry)}: ${e.message ?? 'transport error'}`, true, where);
}
