import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type LabelValues } from 'prom-client';

/**
 * A label's allowed values: a fixed list (anything else is counted as `other`), or a cap on how
 * many distinct values it may take (the first `n` seen pass; later ones are counted as `other`).
 * A cap is for values that come from configuration (aliases, deployments, routes, subjects,
 * tools): bounded in practice, and a misconfiguration or a hostile value still cannot grow the
 * series without limit.
 */
export type LabelSpec = readonly string[] | number;

export type LabelSpecs<L extends string> = { readonly [K in L]: LabelSpec };
export type LabelSet<L extends string> = { readonly [K in L]: string };

/** The value every label falls back to when its value is not allowed. */
export const OTHER = 'other';

/**
 * Names that would carry a caller's identity or request content (ARCHITECTURE "Observability":
 * never a key, account, session, URL or query). Refused when a metric is defined, so such a
 * label cannot ship by accident.
 */
const FORBIDDEN_LABELS = /^(api_?key|key|key_id|account|account_id|tenant|user|user_id|session|session_id|url|uri|path_raw|query|q|request_id|ip)$/;

interface Def<L extends string> {
  /** `drael_<service>_<thing>_<unit>` (ARCHITECTURE "Observability"). */
  name: string;
  help: string;
  labels?: LabelSpecs<L>;
}

let enabled = true;

/**
 * Metrics on or off for this process (METRICS_ENABLED; on by default). Off, every handle's
 * recording call returns at its first line: nothing is counted, nothing allocated.
 */
export function setMetricsEnabled(on: boolean): void {
  enabled = on;
}

export function metricsEnabled(): boolean {
  return enabled;
}

/** Maps label values onto allowed ones and caches the prom-client child for each combination. */
class Bound<L extends string, C> {
  private readonly names: L[];
  private readonly allowed: (Set<string> | { cap: number; seen: Set<string> })[];
  private readonly children = new Map<string, C>();

  constructor(
    name: string,
    specs: LabelSpecs<L> | undefined,
    private readonly make: (values: LabelValues<L>) => C,
  ) {
    this.names = Object.keys(specs ?? {}) as L[];
    for (const label of this.names) {
      if (FORBIDDEN_LABELS.test(label)) throw new Error(`metric ${name}: label '${label}' would identify a caller or carry request content`);
    }
    this.allowed = this.names.map((l) => {
      const spec = specs![l];
      return typeof spec === 'number' ? { cap: spec, seen: new Set<string>() } : new Set(spec);
    });
  }

  child(values: LabelSet<L> | undefined): C {
    let key = '';
    for (let i = 0; i < this.names.length; i++) key += `${values![this.names[i]!]}\u0001`;
    let child = this.children.get(key);
    if (child === undefined) {
      const bounded = {} as Record<L, string>;
      this.names.forEach((n, i) => (bounded[n] = this.bound(i, String(values![n]))));
      child = this.make(bounded);
      this.children.set(key, child);
    }
    return child;
  }

  private bound(i: number, value: string): string {
    const rule = this.allowed[i]!;
    if (rule instanceof Set) return rule.has(value) ? value : OTHER;
    if (rule.seen.has(value)) return value;
    if (rule.seen.size >= rule.cap) return OTHER;
    rule.seen.add(value);
    return value;
  }
}

export interface CounterHandle<L extends string> {
  /** A counter without labels takes `{}`. */
  inc(labels: LabelSet<L>, by?: number): void;
}
export interface GaugeHandle<L extends string> {
  set(labels: LabelSet<L>, value: number): void;
  inc(labels: LabelSet<L>, by?: number): void;
  dec(labels: LabelSet<L>, by?: number): void;
}
export interface HistogramHandle<L extends string> {
  observe(labels: LabelSet<L>, seconds: number): void;
  /** Starts a timer; the returned function observes the seconds elapsed (labels may be completed at the end). */
  time(labels?: Partial<LabelSet<L>>): (end?: Partial<LabelSet<L>>) => void;
}

/** Seconds, from 5 ms to 5 min: an RPC, a page fetch, a container run, a model call. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The one place this project touches prom-client: a registry per process and three kinds of
 * handle whose labels are bounded by their definition. Each process defines its series once, in
 * its own `*.metrics.ts`, and records with one call at one spot.
 */
export class Metrics {
  readonly registry = new Registry();

  counter<L extends string = never>(def: Def<L>): CounterHandle<L> {
    const c = new Counter({ name: def.name, help: def.help, labelNames: Object.keys(def.labels ?? {}), registers: [this.registry] });
    const bound = new Bound<L, { inc(n?: number): void }>(def.name, def.labels, (v) => (def.labels && Object.keys(def.labels).length > 0 ? c.labels(v as LabelValues<string>) : c));
    if (!def.labels || Object.keys(def.labels).length === 0) c.inc(0);
    return {
      inc: (labels, by = 1) => {
        if (!enabled) return;
        bound.child(labels).inc(by);
      },
    };
  }

  gauge<L extends string = never>(def: Def<L> & { collect?: (set: (labels: LabelSet<L>, value: number) => void) => void | Promise<void> }): GaugeHandle<L> {
    const bound: { b?: Bound<L, { set(n: number): void; inc(n?: number): void; dec(n?: number): void }> } = {};
    const collect = def.collect;
    const g: Gauge = new Gauge({
      name: def.name,
      help: def.help,
      labelNames: Object.keys(def.labels ?? {}),
      registers: [this.registry],
      // Read at scrape time from the owner's own state (a pool size, a queue depth): nothing to keep in step.
      ...(collect ? { collect: () => collect((labels, value) => bound.b!.child(labels).set(value)) } : {}),
    });
    bound.b = new Bound(def.name, def.labels, (v) => (def.labels && Object.keys(def.labels).length > 0 ? g.labels(v as LabelValues<string>) : g));
    const b = bound.b;
    return {
      set: (labels, value) => enabled && b.child(labels).set(value),
      inc: (labels, by = 1) => enabled && b.child(labels).inc(by),
      dec: (labels, by = 1) => enabled && b.child(labels).dec(by),
    };
  }

  histogram<L extends string = never>(def: Def<L> & { buckets?: readonly number[] }): HistogramHandle<L> {
    const h = new Histogram({
      name: def.name,
      help: def.help,
      labelNames: Object.keys(def.labels ?? {}),
      buckets: [...(def.buckets ?? DURATION_BUCKETS)],
      registers: [this.registry],
    });
    const bound = new Bound<L, { observe(n: number): void }>(def.name, def.labels, (v) =>
      def.labels && Object.keys(def.labels).length > 0 ? h.labels(v as LabelValues<string>) : h,
    );
    const observe = (labels: LabelSet<L>, value: number) => {
      if (!enabled) return;
      bound.child(labels).observe(value);
    };
    return {
      observe,
      time: (start) => {
        if (!enabled) return noop;
        const t0 = performance.now();
        return (end) => observe({ ...start, ...end } as LabelSet<L>, (performance.now() - t0) / 1000);
      },
    };
  }

  /** Node process metrics (event-loop lag, heap, GC, CPU, handles), prom-client's standard names. */
  collectProcessMetrics(): void {
    if (processMetricsOn.has(this.registry)) return;
    processMetricsOn.add(this.registry);
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
  }

  /** The text exposition format Prometheus scrapes. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

const processMetricsOn = new WeakSet<Registry>();
const noop = () => undefined;

/** This process's metrics: every package and app defines its series on it. */
export const metrics = new Metrics();

/** `2xx`… for a status code: the bounded form a label takes. */
export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : OTHER;
}
