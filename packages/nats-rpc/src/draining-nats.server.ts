import { hostname } from 'node:os';
import { isUtf8 } from 'node:buffer';
import { NatsContext, ServerNats } from '@nestjs/microservices';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { catalogEntries, entrySchemas, DEPTH_PRESCAN_FROM_BYTES, jsonTextNestedDeeperThan, MAX_JSON_DEPTH, nestedDeeperThan, type Catalog, type RpcEntry } from '@drael/contracts';
import { isObservable, lastValueFrom } from 'rxjs';
import { handlerRegistry } from './handles.decorator.js';
import { RpcError } from './rpc-error.js';
import { registerMicroService, type MicroEndpoint, type MicroRegistration } from './micro-service.js';
import { inFlight } from './in-flight.js';
import { natsConnectOptions, type NatsSecurity } from './nats-security.js';
import { startHeartbeats } from './heartbeat.js';
import { queueGroup, wireSubject } from './subject.js';
import { directHandler, type DirectDispatchSource } from './direct-dispatch.js';
import { MAX_PACKET_ID_CHARS, PACKET_ID_TOO_LONG, respondBounded } from './bounded-reply.js';

export interface DrainingNatsServerOptions {
  servers: string | string[];
  service: string;
  prefix: string;
  /** How long shutdown waits for handlers in progress before closing anyway. */
  drainTimeoutMs: number;
  /** The service's catalog: each endpoint's JSON Schemas, timeout and codes in $SRV.INFO. */
  catalog?: Catalog;
  /** Shown by `nats micro ls/info` (semver). */
  version?: string;
  description?: string;
  /** Credentials and TLS (NATS_CREDS_FILE, NATS_TLS_CA_FILE, ...): the app's parsed config. */
  security?: NatsSecurity;
  /**
   * Routed copies of a subject: for each token, `<subject>.<token>` is answered by the same
   * handler, so a caller can reach only the replicas that declared that token (e.g. the gateways
   * serving one model alias: inferenceRouteToken in packages/contracts).
   */
  routes?: Readonly<Record<string, readonly string[]>>;
}

/** Nest's NATS packet: `{pattern, data, id}` in, `{id, response, isDisposed}` or `{id, err, isDisposed}` out. */
interface RequestPacket {
  pattern: string;
  id: string;
  data?: unknown;
}

type NestHandler = ((data: unknown, ctx: NatsContext) => Promise<unknown>) & { isEventHandler?: boolean };

const NOT_JSON = JSON.stringify({
  error: new RpcError('bad_request', 'the body is not JSON: send the request as a JSON object (e.g. {} for a request with no fields)', false).toWire(),
});
const NOT_UTF8 = JSON.stringify({
  error: new RpcError('bad_request', 'the body is not valid UTF-8: JSON between systems is UTF-8 encoded (RFC 8259, section 8.1)', false).toWire(),
});
const NOT_PLAIN = JSON.stringify({
  error: new RpcError('bad_request', "this subject takes Nest's packet format only ({pattern, id, data})", false).toWire(),
});
const INTERNAL = JSON.stringify({ error: new RpcError('internal', 'internal error', true).toWire() });

/**
 * A Nest request packet for this subject: the typed client and Nest's ClientProxy send the catalog
 * subject (without the prefix) as `pattern` and a string `id`. Anything else is a plain request,
 * the body being the request itself; no request schema has a top-level `pattern` equal to its own
 * subject, so the two cannot be confused.
 */
function isPacket(body: unknown, channel: string): body is RequestPacket {
  return typeof body === 'object' && body !== null && (body as RequestPacket).pattern === channel && typeof (body as RequestPacket).id === 'string';
}

const TOO_DEEP = JSON.stringify({
  error: new RpcError('bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted`, false).toWire(),
});

/** `billing.plans.list.v1` → `plans-list-v1`: a micro endpoint name is one token. */
function endpointName(service: string, subject: string): string {
  return (subject.startsWith(`${service}.`) ? subject.slice(service.length + 1) : subject).replace(/[^-\w]/g, '-');
}

/** What $SRV.INFO says of an endpoint: its JSON Schemas (generated from the zod contracts), timeout and codes. */
function endpointMetadata(entry: RpcEntry): Record<string, string> {
  const schemas = entrySchemas(entry);
  return {
    request_schema: JSON.stringify(schemas.request),
    reply_schema: JSON.stringify(schemas.reply),
    timeout_ms: String(entry.timeoutMs),
    error_codes: entry.errors.join(','),
  };
}

/** The error of a reply envelope, as micro's STATS records it (`code: message`). */
function errorOf(envelope: unknown): string | undefined {
  const error = (envelope as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  return error && typeof error === 'object' ? `${String(error.code)}: ${String(error.message)}` : undefined;
}

/**
 * Nest's NATS server with four changes: subjects and the queue group carry the installation
 * prefix; close() stops taking work, waits for handlers in flight, then drains the connection
 * (Nest's own close() drops in-flight replies on the floor); a request whose handler answers
 * with a plain value (every @Handles method does) is answered directly; and no message runs a
 * handler without an answer (issue 15, item 9; issue 22, item 1):
 *
 * - a message with a reply subject is always answered: Nest's packet gets Nest's reply packet,
 *   a plain JSON body (the request itself, for callers in any language) gets the bare reply
 *   envelope `{"result": …}` / `{"error": {code, message, retryable}}` with the same validation
 *   and codes, and a body that is not JSON gets a `bad_request` envelope at once;
 * - a message without a reply subject is refused and logged, never executed: every subject in
 *   the contracts is a request, so a reply-less message is a caller's mistake (or a retry storm
 *   waiting to happen: the action would run and nobody would know). Drael declares no
 *   fire-and-forget subject; one added later must be declared as such in packages/contracts and
 *   let through here.
 *
 * Why the direct answer: Nest's per-message path parses each subject as JSON first (an exception
 * per message for a plain subject), wraps the result in an rxjs stream, queues the reply on
 * process.nextTick and builds a record through its serializer; on billing's hold/settle that was
 * 13-15 % of the service's CPU per request (docs/decisions/0003-billing-hot-path.md). Guards,
 * pipes, interceptors and exception filters run as before: a subject with any of them keeps Nest's
 * handler, and a packet request whose handler answers with an Observable (an interceptor's, or an
 * exception filter's stream) is sent through Nest's own send(). Only a subject that has none of
 * them anywhere has its @Handles method called directly (direct-dispatch.ts, allowDirectDispatch).
 * The bytes on the wire are the same as Nest's.
 */
export class DrainingNatsServer extends ServerNats {
  private client?: NatsConnection;
  private micro?: MicroRegistration;
  private refusedLogged = 0;
  private directSource?: DirectDispatchSource;
  private readonly direct = new Set<string>();
  private closing = false;

  constructor(private readonly drainOptions: DrainingNatsServerOptions) {
    super({ servers: drainOptions.servers, name: drainOptions.service, maxReconnectAttempts: -1, ...natsConnectOptions(drainOptions.security) });
  }

  /**
   * Nest calls this once connected. Each handled subject becomes an endpoint of the service's
   * NATS micro registration (micro-service.ts): that endpoint's subscription, in the service's
   * queue group, is the only one, so a request is handled exactly once and counted where it is.
   */
  override start(callback: (err?: unknown) => void): void {
    const client = (this as unknown as { natsClient: NatsConnection }).natsClient;
    this.client = client;
    this.register(client).then(
      () => callback(),
      (err: unknown) => callback(err),
    );
  }

  /**
   * Lets a subject whose @Handles method nothing wraps (no guard, interceptor, pipe or filter,
   * anywhere) be answered by calling that method directly (direct-dispatch.ts). Given before
   * listen(); without it every message goes through Nest's handler.
   */
  allowDirectDispatch(source: DirectDispatchSource): void {
    this.directSource = source;
  }

  /** The subjects whose @Handles method is called directly (the rest go through Nest's handler). */
  get directSubjects(): ReadonlySet<string> {
    return this.direct;
  }

  override bindEvents(): void {
    // Subscriptions are made by register() (see start()).
  }

  private async register(client: NatsConnection): Promise<void> {
    const { service, prefix, catalog } = this.drainOptions;
    const queue = queueGroup(service, prefix);
    const entries = new Map((catalog ? catalogEntries(catalog) : []).map((e) => [e.subject, e]));
    const endpoints: MicroEndpoint[] = [...this.messageHandlers].flatMap(([channel, nestHandler]) => {
      const entry = entries.get(channel);
      const directly = directHandler(channel, this.directSource);
      if (directly) this.direct.add(channel);
      const handler = directly ?? (nestHandler as NestHandler);
      const endpoint = (subject: string, name: string): MicroEndpoint => ({
        name,
        subject,
        queue,
        metadata: entry ? endpointMetadata(entry) : {},
        handle: (msg: Msg) => this.answer(channel, handler, msg),
      });
      const base = wireSubject(channel, prefix);
      const routes = this.drainOptions.routes?.[channel] ?? [];
      // Routed names carry an index: two tokens may differ only in characters a name cannot hold.
      return [endpoint(base, endpointName(service, channel)), ...routes.map((token, i) => endpoint(`${base}.${token}`, `${endpointName(service, channel)}-r${i}`))];
    });
    this.micro = await registerMicroService(
      client,
      {
        name: service,
        version: this.drainOptions.version ?? '0.1.0',
        description: this.drainOptions.description ?? `Drael ${service}: request/reply over NATS, plain JSON or Nest's packet`,
        // Which process this is (a pod's hostname is its name): `nats micro ls` tells replicas apart,
        // and a starter can wait for its own process rather than any replica of the service.
        metadata: { ...(prefix ? { prefix } : {}), host: hostname(), pid: String(process.pid) },
      },
      endpoints,
    );
  }

  /** The micro service's id (`$SRV.INFO.<service>.<id>`), once listening. */
  get microId(): string | undefined {
    return this.micro?.id;
  }

  /** Answers one message; resolves to the error the caller was answered with, if any (micro's STATS counts it). */
  private async answer(channel: string, handler: NestHandler, msg: Msg): Promise<string | undefined> {
    if (!msg.reply) {
      this.refuseUnanswerable(channel);
      return 'refused: no reply subject';
    }
    // A caller that asked for heartbeats hears this replica is alive until the answer leaves (heartbeat.ts).
    const stopHeartbeats = startHeartbeats(msg, this.micro ? `${this.drainOptions.service}.${this.micro.id}` : undefined);
    try {
      return await this.answerRequest(channel, handler, msg);
    } finally {
      stopHeartbeats();
    }
  }

  private async answerRequest(channel: string, handler: NestHandler, msg: Msg): Promise<string | undefined> {
    // nats.js decodes with a lenient TextDecoder: bytes that are not UTF-8 would become U+FFFD
    // and the handler would act on text the caller never sent.
    if (!isUtf8(msg.data)) {
      msg.respond(NOT_UTF8);
      return 'bad_request: not UTF-8';
    }
    // A large message's depth is told from its bytes before it is parsed: JSON.parse takes 2.5 s of
    // the loop on 8 MB of nested brackets (NATS's payload limit) before the value can be refused
    // below. A packet's data sits one level down: the bytes may nest one level more.
    if (msg.data.length > DEPTH_PRESCAN_FROM_BYTES && jsonTextNestedDeeperThan(msg.data, MAX_JSON_DEPTH + 1)) {
      msg.respond(TOO_DEEP);
      return 'bad_request: too deep';
    }
    let body: unknown;
    try {
      body = msg.json<unknown>();
    } catch {
      msg.respond(NOT_JSON);
      return 'bad_request: not JSON';
    }
    const packet = isPacket(body, channel) ? body : undefined;
    // The edge's bound on nesting, for every subject as for every HTTP route: no handler, schema
    // or re-encoding of the request then walks deeper than this.
    if (nestedDeeperThan(packet ? packet.data : body, MAX_JSON_DEPTH)) {
      msg.respond(TOO_DEEP);
      return 'bad_request: too deep';
    }
    const ctx = new NatsContext([msg.subject, msg.headers]);
    if (!packet) return this.answerPlain(channel, handler, body, ctx, msg);
    const id = packet.id;
    if (id.length > MAX_PACKET_ID_CHARS) {
      msg.respond(PACKET_ID_TOO_LONG);
      return 'bad_request: packet id too long';
    }
    let result: unknown;
    try {
      result = await handler(packet.data, ctx);
    } catch (err) {
      // Only a directly called method can throw here (Nest's handler answers a failure as a stream);
      // @Handles catches its method's errors, so this is a defect of the wrapper: logged, answered.
      this.logger.error(err);
      respondBounded(msg, `{"response":${INTERNAL},"isDisposed":true,"id":${JSON.stringify(id)}}`, id);
      return 'internal';
    }
    if (isObservable(result)) {
      // A stream (an interceptor's, or the exception filter's error): Nest sends it the way it always has.
      const publish = (response: object) => {
        respondBounded(msg, JSON.stringify({ ...response, id }), id);
      };
      this.send(result, publish);
      return undefined;
    }
    // What Nest's send() writes for a single value: the value and the end of the stream in one packet.
    respondBounded(msg, JSON.stringify({ response: result, isDisposed: true, id }), id);
    return errorOf(result);
  }

  /** A plain JSON request: the body is the request, the reply is the bare envelope @Handles builds. */
  private async answerPlain(channel: string, handler: NestHandler, body: unknown, ctx: NatsContext, msg: Msg): Promise<string | undefined> {
    // Only @Handles methods build the envelope; a bare Nest handler's value has no agreed shape.
    if (!handlerRegistry.has(channel)) {
      msg.respond(NOT_PLAIN);
      return 'bad_request: packet only';
    }
    let result: unknown;
    try {
      result = await handler(body, ctx);
      // A guard, pipe or interceptor around the handler answers with a stream: its last value.
      if (isObservable(result)) result = await lastValueFrom(result, { defaultValue: undefined });
    } catch (err) {
      this.logger.error(err);
      result = undefined;
    }
    const envelope = result as { result?: unknown; error?: unknown } | undefined;
    if (envelope && typeof envelope === 'object' && ('result' in envelope || 'error' in envelope)) {
      respondBounded(msg, JSON.stringify(envelope));
      return errorOf(envelope);
    }
    msg.respond(INTERNAL);
    return 'internal';
  }

  /**
   * A message on a request subject with no reply subject: not executed. Logged (the first ten,
   * then every thousandth), so a flood of them cannot flood the log.
   */
  private refuseUnanswerable(channel: string): void {
    this.refusedLogged++;
    if (this.refusedLogged <= 10 || this.refusedLogged % 1000 === 0) {
      this.logger.warn(`refused a message on ${channel} without a reply subject (not executed; every Drael subject is a request, send it as one) [${this.refusedLogged} so far]`);
    }
  }

  get connection(): NatsConnection | undefined {
    return this.client;
  }

  /** Whether this replica is in its service's queue group (its endpoints and $SRV registration). */
  get inQueueGroup(): boolean {
    return this.micro !== undefined;
  }

  /**
   * Leaves the queue group: no new request reaches this replica (NATS gives each to the others, or
   * answers "no responders" when none is left) and $SRV no longer lists it. Requests in flight
   * finish and are answered; the service's other subscriptions are untouched.
   */
  async leaveQueueGroup(): Promise<void> {
    const micro = this.micro;
    this.micro = undefined;
    await micro?.stop();
  }

  /** Joins the queue group again (a new $SRV registration), unless closing or in it already. */
  async rejoinQueueGroup(): Promise<void> {
    if (this.micro || this.closing || !this.client || this.client.isClosed()) return;
    await this.register(this.client);
  }

  override async close(): Promise<void> {
    this.closing = true;
    // Stop taking work (the endpoints and $SRV drain), then let what is in flight finish.
    await this.micro?.stop();
    await inFlight.idle(this.drainOptions.drainTimeoutMs);
    if (this.client && !this.client.isClosed()) await this.client.drain();
    await super.close();
  }
}
