import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';

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

/**
 * One series' state in plain fields. Recording is a field update: prom-client's own `inc` and
 * `observe` validate and hash the label object on every call, which cost the gateway's proxy path
 * 6-10 % of its CPU per request (bench/gateway-passthrough, metrics on vs off, 2026-12-01); these
 * series are bound once and read only when Prometheus scrapes.
 */
class Series {
  value = 0;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Record<string, string>,
    /** Per bucket, observations that fell in it (not cumulative); histograms only. */
    readonly counts?: Float64Array,
  ) {}
}

/** Distinct raw label combinations remembered per metric; beyond it they are bounded on each call. */
const RAW_CACHE_LIMIT = 4_096;

/**
 * A metric family: its label values mapped onto the allowed ones, a series per allowed
 * combination, and the `get()` prom-client's registry calls at scrape time to render it. It is
 * registered into prom-client's registry like prom-client's own metrics, so the exposition format
 * and the process metrics stay prom-client's.
 */
class Family<L extends string> {
  private readonly names: L[];
  private readonly allowed: (Set<string> | { cap: number; seen: Set<string> })[];
  /** Raw label values (as sent) → series: the fast path. */
  private readonly byRaw = new Map<string, Series>();
  /** Bounded label values → series: values folded into `other` share one. */
  private readonly byBounded = new Map<string, Series>();
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'histogram',
    specs: LabelSpecs<L> | undefined,
    private readonly buckets: readonly number[] = [],
    private readonly collect?: () => void | Promise<void>,
  ) {
    this.names = Object.keys(specs ?? {}) as L[];
    for (const label of this.names) {
      if (FORBIDDEN_LABELS.test(label)) throw new Error(`metric ${name}: label '${label}' would identify a caller or carry request content`);
    }
    this.allowed = this.names.map((l) => {
      const spec = specs![l];
      return typeof spec === 'number' ? { cap: spec, seen: new Set<string>() } : new Set(spec);
    });
    // A series without labels exists from the start (a counter reads 0 before its first event).
    if (this.names.length === 0) this.series(undefined);
  }

  series(values: LabelSet<L> | undefined): Series {
    let key = '';
    for (let i = 0; i < this.names.length; i++) key += `${values![this.names[i]!]}\u0001`;
    let found = this.byRaw.get(key);
    if (found === undefined) {
      const bounded: Record<string, string> = {};
      let boundedKey = '';
      for (let i = 0; i < this.names.length; i++) {
        const value = this.bound(i, String(values![this.names[i]!]));
        bounded[this.names[i]!] = value;
        boundedKey += `${value}\u0001`;
      }
      found = this.byBounded.get(boundedKey);
      if (found === undefined) {
        found = new Series(bounded, this.type === 'histogram' ? new Float64Array(this.buckets.length) : undefined);
        this.byBounded.set(boundedKey, found);
      }
      if (this.byRaw.size < RAW_CACHE_LIMIT) this.byRaw.set(key, found);
    }
    return found;
  }

  observe(series: Series, value: number): void {
    const buckets = this.buckets;
    for (let i = 0; i < buckets.length; i++) {
      if (value <= buckets[i]!) {
        series.counts![i]!++;
        break;
      }
    }
    series.sum += value;
    series.count++;
  }

  private bound(i: number, value: string): string {
    const rule = this.allowed[i]!;
    if (rule instanceof Set) return rule.has(value) ? value : OTHER;
    if (rule.seen.has(value)) return value;
    if (rule.seen.size >= rule.cap) return OTHER;
    rule.seen.add(value);
    return value;
  }

  /** prom-client's registry reads the family through this at scrape time, as it reads its own metrics. */
  async get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
  }> {
    if (this.collect) await this.collect();
    const values: { value: number; labels: Record<string, string | number>; metricName?: string }[] = [];
    for (const s of this.byBounded.values()) {
      if (this.type !== 'histogram') {
        values.push({ value: s.value, labels: s.labels });
        continue;
      }
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts![i]!;
        values.push({ value: cumulative, labels: { le, ...s.labels }, metricName: `${this.name}_bucket` });
      });
      values.push({ value: s.count, labels: { le: '+Inf', ...s.labels }, metricName: `${this.name}_bucket` });
      values.push({ value: s.sum, labels: s.labels, metricName: `${this.name}_sum` });
      values.push({ value: s.count, labels: s.labels, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.byBounded.values()) {
      s.value = s.sum = s.count = 0;
      s.counts?.fill(0);
    }
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

  private register<L extends string>(family: Family<L>): Family<L> {
    // A family answers the registry's calls (get, reset, name) as prom-client's own metric classes do.
    this.registry.registerMetric(family as unknown as Metric);
    return family;
  }

  counter<L extends string = never>(def: Def<L>): CounterHandle<L> {
    const family = this.register(new Family<L>(def.name, def.help, 'counter', def.labels));
    return {
      inc: (labels, by = 1) => {
        if (!enabled) return;
        family.series(labels).value += by;
      },
    };
  }

  gauge<L extends string = never>(def: Def<L> & { collect?: (set: (labels: LabelSet<L>, value: number) => void) => void | Promise<void> }): GaugeHandle<L> {
    const collect = def.collect;
    // Read at scrape time from the owner's own state (a pool size, a queue depth): nothing to keep in step.
    const family: Family<L> = this.register(
      new Family<L>(def.name, def.help, 'gauge', def.labels, [], collect ? () => collect((labels, value) => (family.series(labels).value = value)) : undefined),
    );
    return {
      set: (labels, value) => {
        if (enabled) family.series(labels).value = value;
      },
      inc: (labels, by = 1) => {
        if (enabled) family.series(labels).value += by;
      },
      dec: (labels, by = 1) => {
        if (enabled) family.series(labels).value -= by;
      },
    };
  }

  histogram<L extends string = never>(def: Def<L> & { buckets?: readonly number[] }): HistogramHandle<L> {
    const family = this.register(
      new Family<L>(
        def.name,
        def.help,
        'histogram',
        def.labels,
        [...(def.buckets ?? DURATION_BUCKETS)].sort((a, b) => a - b),
      ),
    );
    const observe = (labels: LabelSet<L>, value: number) => {
      if (!enabled) return;
      family.observe(family.series(labels), value);
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
    // The lag histogram samples a timer every `eventLoopMonitoringPrecision` ms, waking an idle
    // process each time: at 20 ms that is 5.3 ms of CPU a second per idle process, at 100 ms 2.3
    // (bench/metrics/idle.mjs). Kept at 20: at 100 a search read ~0.2 ms slower end to end in
    // bench/search/min-pipeline (a process that sleeps longer wakes slower), and latency is what
    // users feel (bench/nats-rpc/README.md, 2026-12-02).
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
