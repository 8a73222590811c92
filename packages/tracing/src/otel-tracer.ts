import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace';
import type { SpanAttributes, SpanKindName, SpanOptions, TraceSpan, TracerBackend, TracesSampler, TracingOptions } from './index.js';
import { NO_SPAN } from './no-span.js';

// Loaded only when tracing is on (index.ts imports this module dynamically): the only file in
// Drael that touches OpenTelemetry.

const KINDS: Record<SpanKindName, SpanKind> = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT, consumer: SpanKind.CONSUMER };

class OtelSpan implements TraceSpan {
  private ctx: Context | undefined;

  constructor(
    private readonly span: Span,
    private readonly parent: Context,
  ) {}

  get traceparent(): string {
    const c = this.span.spanContext();
    return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  setAttributes(attributes: SpanAttributes): void {
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) this.span.setAttribute(key, value);
    }
  }

  rename(name: string): void {
    this.span.updateName(name);
  }

  fail(error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    this.span.recordException(err);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  }

  end(): void {
    this.span.end();
  }

  run<T>(fn: () => T): T {
    this.ctx ??= trace.setSpan(this.parent, this.span);
    return context.with(this.ctx, fn);
  }
}

/** A remote caller's context from its `traceparent`, or the root (a new trace) when absent or malformed. */
function remoteParent(traceparent: string | undefined): Context {
  const spanContext = traceparent ? parseTraceParent(traceparent) : null;
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, { ...spanContext, isRemote: true }) : ROOT_CONTEXT;
}

/** The SDK's sampler for an OTEL_TRACES_SAMPLER name (the ratio from OTEL_TRACES_SAMPLER_ARG, 1 when unset, as OpenTelemetry says). */
function samplerOf(s: TracesSampler | undefined): Sampler {
  const ratio = s?.ratio ?? 1;
  switch (s?.name ?? 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

export function createOtelBackend(options: TracingOptions & { endpoint: string }): TracerBackend {
  // AsyncLocalStorage carries the current span across awaits, timers and callbacks.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // OTLP/HTTP with protobuf bodies, the protocol's default encoding (every collector takes it).
  const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': `drael-${options.service}` }),
    // OTEL_TRACES_SAMPLER (default parentbased_always_on: a new trace is recorded, a caller's as
    // its sampled flag says). A span sampled out is not recorded, but it still has its trace's id
    // and a span id: its traceparent (flags 00) goes on to the upstream and over NATS, so the
    // trace stays one trace wherever it is recorded, and a downstream honours the decision.
    sampler: samplerOf(options.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...(options.scheduleDelayMs !== undefined ? { scheduledDelayMillis: options.scheduleDelayMs } : {}) })],
  });
  const tracer = provider.getTracer('drael');

  return {
    start(name: string, o: SpanOptions): TraceSpan {
      const kind = o.kind ?? 'internal';
      // A server or consumer span's parent is its caller's or producer's (or none); anything else nests in the current span.
      const parent = kind === 'server' || kind === 'consumer' ? remoteParent(o.parent) : context.active();
      const span = tracer.startSpan(name, { kind: KINDS[kind] }, parent);
      const handle = new OtelSpan(span, parent);
      if (o.attributes) handle.setAttributes(o.attributes);
      return handle;
    },
    current(): TraceSpan {
      const active = context.active();
      const span = trace.getSpan(active);
      return span ? new OtelSpan(span, active) : NO_SPAN;
    },
    currentTraceId(): string | undefined {
      return trace.getSpan(context.active())?.spanContext().traceId;
    },
    async shutdown(): Promise<void> {
      await provider.shutdown();
      context.disable();
    },
  };
}
