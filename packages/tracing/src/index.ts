import type { IncomingMessage, ServerResponse } from 'node:http';
import { NO_SPAN } from './no-span.js';

/**
 * Drael's one interface to tracing (OpenTelemetry behind it). Everything in Drael that makes a
 * span goes through these few functions; nothing else imports @opentelemetry/*.
 *
 * Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and off costs nothing: this module imports no
 * OpenTelemetry code at all, `startSpan` hands back one shared do-nothing span, `inSpan` calls
 * its function straight away, and `traceRequests` returns the listener it was given. The SDK
 * (./otel-tracer.js) is loaded by `startTracing` only when there is somewhere to send spans.
 */

export type SpanKindName = 'internal' | 'server' | 'client' | 'consumer';
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface SpanOptions {
  /**
   * 'server' for work a remote caller asked for (HTTP request, NATS handler), 'client' for a call
   * out, 'consumer' for queued work picked up later (an agent run's execution).
   */
  readonly kind?: SpanKindName;
  readonly attributes?: SpanAttributes;
  /**
   * A server or consumer span's remote parent: the W3C `traceparent` the caller sent (HTTP or
   * NATS header) or the producer stored with the work. Absent or malformed: the span starts a new
   * trace. Ignored for other kinds, whose parent is the current span.
   */
  readonly parent?: string | undefined;
}

export interface TraceSpan {
  /** The W3C `traceparent` naming this span as the parent, for the header of a call it makes; undefined when off. */
  readonly traceparent: string | undefined;
  /** The trace's id (32 hex digits); undefined when off. */
  readonly traceId: string | undefined;
  setAttributes(attributes: SpanAttributes): void;
  /** A server span learns its route after it started (`POST /v1/sessions/:id/files`). */
  rename(name: string): void;
  /** Marks the span failed (the error's message and type are recorded). */
  fail(error: unknown): void;
  end(): void;
  /** Runs `fn` with this span as the current one: spans started inside are its children. */
  run<T>(fn: () => T): T;
}

/** What ./otel-tracer.js provides once loaded. */
export interface TracerBackend {
  start(name: string, options: SpanOptions): TraceSpan;
  /** The current span, or the shared no-op span outside any. */
  current(): TraceSpan;
  currentTraceId(): string | undefined;
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry's standard samplers, by their OTEL_TRACES_SAMPLER names (the SDK's own classes
 * behind each). `parentbased_*`: a trace the caller started (its `traceparent`) is recorded as
 * the caller's sampled flag says, and only a new trace is decided by the rest of the name.
 * `traceidratio`: a share of traces by trace id, OTEL_TRACES_SAMPLER_ARG (0..1, default 1).
 */
export const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TracesSamplerName = (typeof TRACES_SAMPLERS)[number];

export interface TracesSampler {
  readonly name: TracesSamplerName;
  /** The ratio of `*traceidratio` (0..1); ignored by the others. */
  readonly ratio?: number | undefined;
}

export interface TracingOptions {
  /** Names the process in every span (resource `service.name`). */
  readonly service: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (spans go to `<endpoint>/v1/traces`); unset: tracing off. */
  readonly endpoint: string | undefined;
  /** OTEL_BSP_SCHEDULE_DELAY: how long finished spans wait to be sent in one batch (ms). */
  readonly scheduleDelayMs?: number;
  /** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG; OpenTelemetry's default (parentbased_always_on) when absent. */
  readonly sampler?: TracesSampler;
}

let backend: TracerBackend | undefined;

/** True once `startTracing` loaded the SDK (an endpoint was configured). */
export function tracingEnabled(): boolean {
  return backend !== undefined;
}

/**
 * Called once at boot, before the process serves anything. Without an endpoint it does nothing
 * (no OpenTelemetry module is loaded); with one it loads the SDK, which exports spans over
 * OTLP/HTTP (protobuf) in batches.
 */
export async function startTracing(options: TracingOptions): Promise<void> {
  if (!options.endpoint || backend) return;
  const { createOtelBackend } = await import('./otel-tracer.js');
  backend = createOtelBackend({ ...options, endpoint: options.endpoint });
}

/** Sends the spans still waiting and stops the SDK (called while shutting down); nothing when off. */
export async function stopTracing(): Promise<void> {
  const b = backend;
  backend = undefined;
  await b?.shutdown();
}

/** A span the caller ends itself (`end()`), for work that does not fit one function call. */
export function startSpan(name: string, options: SpanOptions = {}): TraceSpan {
  return backend ? backend.start(name, options) : NO_SPAN;
}

/**
 * Runs `fn` in a new span that ends when `fn` settles; a throw marks it failed and is rethrown.
 * Off: `fn(no-op span)`, nothing else.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: TraceSpan) => Promise<T>): Promise<T> {
  if (!backend) return fn(NO_SPAN);
  const span = backend.start(name, options);
  return span
    .run(() => fn(span))
    .then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        span.fail(err);
        span.end();
        throw err;
      },
    );
}

/** The current span (the no-op one when off or outside any span). */
export function currentSpan(): TraceSpan {
  return backend ? backend.current() : NO_SPAN;
}

/** The current trace's id, for log lines; undefined when off or outside any span. */
export function currentTraceId(): string | undefined {
  return backend?.currentTraceId();
}

/** The W3C header name, as it travels on HTTP and in NATS headers. */
export const TRACEPARENT_HEADER = 'traceparent';

/**
 * Wraps an HTTP server's request listener so each request runs in a server span: the client's
 * `traceparent` is its parent when sent (else a new trace starts), it ends when the response
 * closes, with the status; a 5xx or a response cut short marks it failed. Off: `listener` itself.
 */
export function traceRequests(listener: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  if (!backend) return listener;
  const b = backend;
  return (req, res) => {
    const method = req.method ?? 'GET';
    const given = req.headers[TRACEPARENT_HEADER];
    const span = b.start(method, {
      kind: 'server',
      parent: typeof given === 'string' ? given : undefined,
      attributes: { 'http.request.method': method, 'url.path': (req.url ?? '/').split('?', 1)[0] },
    });
    res.once('close', () => {
      span.setAttributes({ 'http.response.status_code': res.statusCode });
      if (res.statusCode >= 500) span.fail(new Error(`HTTP ${res.statusCode}`));
      else if (!res.writableFinished) span.fail(new Error('the response was cut short'));
      span.end();
    });
    span.run(() => listener(req, res));
  };
}

/** Names the current HTTP server span by its route (`POST /v1/sessions/:id/files`); nothing when off. */
export function nameHttpRoute(method: string, route: string): void {
  if (!backend) return;
  const span = backend.current();
  span.rename(`${method} ${route}`);
  span.setAttributes({ 'http.route': route });
}
