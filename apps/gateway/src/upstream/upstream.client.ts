import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { startSpan, TRACEPARENT_HEADER, type TraceSpan } from '@drael/tracing';
import { ApiError } from '../errors/api-error.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import type { DeploymentConfig } from '../models/model-routes.config.js';
import type { ResolvedModel } from '../models/model-registry.js';
import type { Deployment } from './deployment.js';
import { ModelRouter, type RoutePlan } from './model-router.service.js';
import {
  answerDeadlinePassed,
  answerFailure,
  answerTooLarge,
  MAX_MODEL_ANSWER_BYTES,
  statusFailure,
  transportFailure,
  unacceptedAnswer,
  type AttemptFailure,
} from './upstream-failure.js';

export interface UpstreamCall {
  readonly path: string;
  /**
   * The body for a deployment, given its upstream model name (deployments of one alias may differ)
   * and its configuration (the name it takes the output limit under, withOutputLimitAs).
   */
  readonly bodyFor: (upstreamModel: string, deployment: DeploymentConfig) => string | Buffer;
  readonly requestId: string;
  readonly accept?: string;
  /** The upstream call's span (W3C traceparent), sent so the model server's trace joins ours; set here when tracing is on. */
  readonly traceparent?: string;
}

/** An accepted answer read to its end (UpstreamClient.read) and the deployment that served it. */
export interface WholeAnswer {
  readonly deployment: DeploymentConfig;
  readonly text: string;
}

/** An accepted (status < 400) answer and the deployment that serves it. */
export type UpstreamResponse = Dispatcher.ResponseData & { readonly deployment: DeploymentConfig };

/**
 * What a reader (the proxy, read) gets from a routed dispatch: the attempt's controller as each starts, then either
 * an accepted answer (head, chunks, end or a mid-body error: never retried) or, when no attempt
 * was accepted, the error the client gets.
 */
export interface RoutedSink {
  onAttempt(controller: Dispatcher.DispatchController): void;
  onAccepted(deployment: DeploymentConfig, controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void;
  onData(controller: Dispatcher.DispatchController, chunk: Buffer): void;
  onEnd(): void;
  /** A failure after acceptance, or one that is not the upstream's (the client went away). */
  onError(err: Error): void;
  onFailure(error: ApiError): void;
  /**
   * A 2xx head this sink cannot take as its answer (e.g. a stream to a request for a whole
   * answer), or undefined: refused like unacceptedAnswer's, so the next deployment is tried.
   */
  refuses?(headers: IncomingHttpHeaders, origin: string): AttemptFailure | undefined;
}

// An upstream error body longer than this is cut: it only has to carry a message.
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The only place that speaks HTTP to model upstreams, and through ModelRouter the only place that
 * routes: every call names an alias, each attempt goes to the deployment the router picks, and a
 * retryable failure (connect error, no headers in time, 429, 5xx) before the answer is accepted
 * is retried on another deployment (README "Model routing"). One keep-alive undici Pool per
 * upstream origin, so a request reuses a warm connection.
 */
@Injectable()
export class UpstreamClient implements OnApplicationShutdown {
  private readonly pools = new Map<string, Pool>();

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly router: ModelRouter,
  ) {}

  /**
   * For a reader of a streamed turn (both loops): resolves once an attempt is accepted, with the
   * answer's body as a Readable. The call's span lasts until the body is read or dropped.
   */
  async post(route: ResolvedModel, call: UpstreamCall & { readonly signal: AbortSignal }): Promise<UpstreamResponse> {
    const span = upstreamSpan(route);
    if (!span.traceparent) return this.attempt(route, call);
    try {
      const res = await this.attempt(route, { ...call, traceparent: span.traceparent });
      span.setAttributes({ 'drael.upstream.deployment': res.deployment.name, 'http.response.status_code': res.statusCode });
      res.body.once('close', () => span.end());
      return res;
    } catch (err) {
      span.fail(err);
      span.end();
      throw err;
    }
  }

  private async attempt(route: ResolvedModel, call: UpstreamCall & { readonly signal: AbortSignal }): Promise<UpstreamResponse> {
    const plan = this.router.plan(route);
    for (;;) {
      const d = plan.next();
      const { origin, path } = this.endpointOf(d.config.base_url, call.path);
      const body = plan.bodyOf(d, call);
      let failure: AttemptFailure | undefined;
      try {
        const res = await this.poolFor(origin).request({
          method: 'POST',
          path,
          headers: headersFor(d.config, call),
          body,
          signal: call.signal,
          headersTimeout: plan.headersTimeout(d) ?? null,
          bodyTimeout: plan.bodyTimeout(d) ?? null,
        });
        const refusal = res.statusCode < 400 ? unacceptedAnswer(res.statusCode, res.headers, d.name) : undefined;
        if (res.statusCode < 400 && !refusal) {
          plan.succeeded(d);
          res.body.once('close', () => plan.end(d));
          return Object.assign(res, { deployment: d.config });
        }
        const text = await boundedText(res.body);
        failure = refusal ?? statusFailure(res.statusCode, res.headers, text, Date.now(), d.name);
      } catch (err) {
        failure = transportFailure(err, d.name);
        if (!failure) {
          plan.end(d);
          throw err;
        }
      }
      plan.end(d);
      if (!plan.failed(d, failure)) throw failure.error;
    }
  }

  /**
   * The proxy's hot path: undici's raw dispatch, whose handler gets each body chunk as it is read
   * (no Readable, no AbortController, no async-resource hop per callback). Retries happen inside,
   * before the sink sees an accepted answer; from then on the sink has the answer to itself.
   */
  dispatch(route: ResolvedModel, call: UpstreamCall, sink: RoutedSink): void {
    const span = upstreamSpan(route);
    if (span.traceparent) {
      call = { ...call, traceparent: span.traceparent };
      sink = new SpanSink(sink, span);
    }
    new RoutedDispatch(this, this.router.plan(route), call, sink).start();
  }

  /**
   * A whole answer as text, for a reader that needs all of it before it can act (a non-streamed
   * model turn, inference for agent runs). It rides the proxy's raw dispatch (issue 20: no
   * Readable, no promise per chunk), with its routing and retries. Rejects with the failure
   * before acceptance, with the caller's abort (`signal.reason`) or a failure that is not the
   * upstream's as it came, and with answerFailure's error for a body that breaks off.
   * `onAccepted` is told the deployment as soon as it accepts, before the body is read.
   */
  read(route: ResolvedModel, call: UpstreamCall & { readonly signal: AbortSignal }, onAccepted?: (deployment: DeploymentConfig) => void): Promise<WholeAnswer> {
    return new Promise<WholeAnswer>((resolve, reject) => this.dispatch(route, call, new WholeAnswerSink(call.signal, resolve, reject, (d) => this.answerIdleMs(d), onAccepted)));
  }

  /** One attempt of a routed dispatch on one deployment. */
  dispatchTo(d: Deployment, plan: RoutePlan, call: UpstreamCall, handler: Dispatcher.DispatchHandler): void {
    const { origin, path } = this.endpointOf(d.config.base_url, call.path);
    const options: Dispatcher.DispatchOptions = { method: 'POST', path, headers: headersFor(d.config, call), body: plan.bodyOf(d, call) };
    // Set per request only when they differ from the pool's (a deployment's own, or a retry's).
    const headersTimeout = plan.headersTimeout(d);
    if (headersTimeout !== undefined) options.headersTimeout = headersTimeout;
    const bodyTimeout = plan.bodyTimeout(d);
    if (bodyTimeout !== undefined) options.bodyTimeout = bodyTimeout;
    this.poolFor(origin).dispatch(options, handler);
  }

  /** The longest a deployment's answer may go without a piece of it (its body timeout, the pool's by default). */
  answerIdleMs(deployment: DeploymentConfig): number {
    return deployment.body_timeout_ms ?? this.config.UPSTREAM_BODY_TIMEOUT_MS;
  }

  /** Tokens an answer reported (tpm limits, per-deployment figures). */
  recordUsage(deployment: DeploymentConfig, usage: { prompt_tokens: number; completion_tokens: number }): void {
    this.router.recordUsage(deployment.name, deployment.alias, usage);
  }

  // Parsing the same base URL on every request showed up in profiles.
  private readonly endpoints = new Map<string, { origin: string; path: string }>();
  private endpointOf(baseUrl: string, path: string): { origin: string; path: string } {
    const key = baseUrl + path;
    let endpoint = this.endpoints.get(key);
    if (!endpoint) {
      const url = new URL(key);
      endpoint = { origin: url.origin, path: url.pathname + url.search };
      this.endpoints.set(key, endpoint);
    }
    return endpoint;
  }

  private poolFor(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        // undici's null: no cap (UPSTREAM_CONNECTIONS=0), one connection per answer in flight.
        connections: this.config.UPSTREAM_CONNECTIONS === 0 ? null : this.config.UPSTREAM_CONNECTIONS,
        headersTimeout: this.config.UPSTREAM_HEADERS_TIMEOUT_MS,
        bodyTimeout: this.config.UPSTREAM_BODY_TIMEOUT_MS,
        keepAliveTimeout: 30_000,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
  }
}

/**
 * A routed dispatch: one handler object for every attempt of one request (each attempt starts
 * only after the previous one's last callback). An error status's body is read (bounded) before
 * deciding, which leaves the connection reusable.
 */
class RoutedDispatch implements Dispatcher.DispatchHandler {
  private d!: Deployment;
  private accepted = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private collected = 0;
  /** An answer below 400 that is still no answer (unacceptedAnswer): read like an error status's, then failed. */
  private refusal: AttemptFailure | undefined;

  constructor(
    private readonly client: UpstreamClient,
    private readonly plan: RoutePlan,
    private readonly call: UpstreamCall,
    private readonly sink: RoutedSink,
  ) {}

  start(): void {
    try {
      this.d = this.plan.next();
    } catch (err) {
      this.sink.onFailure(err as ApiError);
      return;
    }
    if (this.chunks.length > 0) {
      this.chunks = [];
      this.collected = 0;
    }
    this.client.dispatchTo(this.d, this.plan, this.call, this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.sink.onAttempt(controller);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.refusal = statusCode < 400 ? (unacceptedAnswer(statusCode, headers, this.d.name) ?? this.sink.refuses?.(headers, this.d.name)) : undefined;
    if (statusCode < 400 && !this.refusal) {
      this.accepted = true;
      this.plan.succeeded(this.d);
      this.sink.onAccepted(this.d.config, controller, statusCode, headers);
    } else {
      this.headers = headers;
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.accepted) return this.sink.onData(controller, chunk);
    if (this.collected >= MAX_ERROR_BODY_BYTES) return;
    this.chunks.push(chunk);
    this.collected += chunk.length;
  }

  onResponseEnd(): void {
    this.plan.end(this.d);
    if (this.accepted) return this.sink.onEnd();
    this.retryOr(this.refusal ?? statusFailure(this.status, this.headers, Buffer.concat(this.chunks).toString('utf8'), Date.now(), this.d.name));
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.plan.end(this.d);
    if (this.accepted) return this.sink.onError(err);
    const failure = transportFailure(err, this.d.name);
    if (!failure) return this.sink.onError(err);
    this.retryOr(failure);
  }

  private retryOr(failure: AttemptFailure): void {
    if (this.plan.failed(this.d, failure)) this.start();
    else this.sink.onFailure(failure.error);
  }
}

/** One call to an alias's upstream (its retries included): a client span; the no-op span when tracing is off. */
function upstreamSpan(route: ResolvedModel): TraceSpan {
  return startSpan(`upstream ${route.alias}`, { kind: 'client', attributes: { 'gen_ai.request.model': route.alias } });
}

/** A routed dispatch's sink that ends the call's span with the answer (tracing on only). */
class SpanSink implements RoutedSink {
  constructor(
    private readonly sink: RoutedSink,
    private readonly span: TraceSpan,
  ) {}

  onAttempt(controller: Dispatcher.DispatchController): void {
    this.sink.onAttempt(controller);
  }

  onAccepted(deployment: DeploymentConfig, controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.span.setAttributes({ 'drael.upstream.deployment': deployment.name, 'http.response.status_code': statusCode });
    this.sink.onAccepted(deployment, controller, statusCode, headers);
  }

  onData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.sink.onData(controller, chunk);
  }

  onEnd(): void {
    this.span.end();
    this.sink.onEnd();
  }

  onError(err: Error): void {
    this.span.fail(err);
    this.span.end();
    this.sink.onError(err);
  }

  onFailure(error: ApiError): void {
    this.span.fail(error);
    this.span.end();
    this.sink.onFailure(error);
  }

  refuses(headers: IncomingHttpHeaders, origin: string): AttemptFailure | undefined {
    return this.sink.refuses?.(headers, origin);
  }
}

/**
 * UpstreamClient.read's side of a routed dispatch: the accepted answer's chunks, joined once it
 * ends. The caller's abort stops the attempt in flight (or the next one as it starts); the answer
 * settles once, with read()'s errors.
 */
class WholeAnswerSink implements RoutedSink {
  private controller?: Dispatcher.DispatchController;
  private accepted: DeploymentConfig | undefined;
  private chunks: Buffer[] = [];
  private bytes = 0;
  /** Resolved or rejected: later callbacks of the attempt (after a failure stopped it) are dropped. */
  private settled = false;
  private readonly onAbort: () => void;
  private deadline: NodeJS.Timeout | undefined;

  constructor(
    private readonly signal: AbortSignal,
    private readonly resolve: (value: WholeAnswer) => void,
    private readonly reject: (err: unknown) => void,
    /** How long an accepted answer may take to its end (the deployment's body timeout). */
    private readonly deadlineOf: (deployment: DeploymentConfig) => number,
    private readonly onAcceptedBy?: (deployment: DeploymentConfig) => void,
  ) {
    // Made as a const, not a field initialiser: V8 pretenures a closure assigned to a property
    // (eslint.config.js, no-restricted-syntax).
    const onAbort = () => this.controller?.abort(this.signal.reason);
    this.onAbort = onAbort;
    signal.addEventListener('abort', onAbort, { once: true });
  }

  onAttempt(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal.aborted) controller.abort(this.signal.reason);
  }

  onAccepted(deployment: DeploymentConfig): void {
    this.accepted = deployment;
    const ms = this.deadlineOf(deployment);
    this.deadline = setTimeout(() => this.fail(answerDeadlinePassed(ms, deployment.name)), ms);
    this.deadline.unref();
    this.onAcceptedBy?.(deployment);
  }

  onData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > MAX_MODEL_ANSWER_BYTES) return this.fail(answerTooLarge());
    this.chunks.push(chunk);
  }

  onEnd(): void {
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    if (this.settle()) this.resolve({ deployment: this.accepted!, text: body.toString('utf8') });
  }

  onError(err: Error): void {
    // Only an accepted answer that broke off is the upstream's failure; an abort stays an abort.
    this.fail(this.accepted && !this.signal.aborted ? answerFailure(err) : err);
  }

  onFailure(error: ApiError): void {
    this.fail(error);
  }

  /** Settles with `err`, and stops the answer if it is still coming. */
  private fail(err: unknown): void {
    if (!this.settle()) return;
    // A no-op for an attempt undici has already ended (onError, onFailure).
    this.controller?.abort(err instanceof Error ? err : new Error(String(err)));
    this.reject(err);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.deadline);
    this.signal.removeEventListener('abort', this.onAbort);
    return true;
  }
}

async function boundedText(body: Dispatcher.ResponseData['body']): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      if (text.length < MAX_ERROR_BODY_BYTES) text += (chunk as Buffer).toString('utf8');
    }
  } catch {
    // the message is best effort; the status still goes through
  }
  return text;
}

/** What every upstream call sends: JSON in, the answer kind asked for, the request id, the trace context, the deployment's key. */
function headersFor(d: DeploymentConfig, call: Pick<UpstreamCall, 'accept' | 'requestId' | 'traceparent'>): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: call.accept ?? 'application/json, text/event-stream',
    'x-request-id': call.requestId,
  };
  if (call.traceparent) headers[TRACEPARENT_HEADER] = call.traceparent;
  if (d.api_key) headers.authorization = `Bearer ${d.api_key}`;
  return headers;
}
