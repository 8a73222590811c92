import { describe, expect, it } from 'vitest';
import { Metrics, setMetricsEnabled } from './metrics.js';
import { metricNames, sampleValue } from './exposition.js';

describe('Metrics', () => {
  it('counts under allowed label values and folds anything else into `other`', async () => {
    const m = new Metrics();
    const c = m.counter({ name: 't_outcomes_total', help: 'h', labels: { outcome: ['ok', 'failed'] } });
    c.inc({ outcome: 'ok' });
    c.inc({ outcome: 'ok' }, 2);
    c.inc({ outcome: 'https://secret.example/?q=x' });
    const { body } = await m.render();
    expect(sampleValue(body, 't_outcomes_total', { outcome: 'ok' })).toBe(3);
    expect(sampleValue(body, 't_outcomes_total', { outcome: 'other' })).toBe(1);
    expect(body).not.toContain('secret.example');
  });

  it('a capped label keeps its first n values and folds the rest', async () => {
    const m = new Metrics();
    const c = m.counter({ name: 't_capped_total', help: 'h', labels: { alias: 2 } });
    for (const a of ['a', 'b', 'c', 'd', 'a']) c.inc({ alias: a });
    const { body } = await m.render();
    expect(sampleValue(body, 't_capped_total', { alias: 'a' })).toBe(2);
    expect(sampleValue(body, 't_capped_total', { alias: 'b' })).toBe(1);
    expect(sampleValue(body, 't_capped_total', { alias: 'other' })).toBe(2);
  });

  it('refuses a label that would carry a key, account, session, URL or query', () => {
    const m = new Metrics();
    for (const label of ['api_key', 'account', 'session', 'url', 'query']) {
      expect(() => m.counter({ name: `t_bad_${label}_total`, help: 'h', labels: { [label]: 3 } })).toThrow(/identify a caller/);
    }
  });

  it('histograms observe seconds; gauges read their owner at scrape time; off records nothing', async () => {
    const m = new Metrics();
    const h = m.histogram({ name: 't_seconds', help: 'h', labels: { kind: ['x'] }, buckets: [0.1, 1] });
    let depth = 7;
    m.gauge({ name: 't_depth', help: 'h', labels: { state: ['waiting'] }, collect: (set) => set({ state: 'waiting' }, depth) });
    h.observe({ kind: 'x' }, 0.5);
    setMetricsEnabled(false);
    h.observe({ kind: 'x' }, 0.5);
    setMetricsEnabled(true);
    depth = 9;
    const { body } = await m.render();
    expect(sampleValue(body, 't_seconds_count', { kind: 'x' })).toBe(1);
    expect(sampleValue(body, 't_seconds_bucket', { kind: 'x', le: '1' })).toBe(1);
    expect(sampleValue(body, 't_seconds_bucket', { kind: 'x', le: '0.1' })).toBe(0);
    expect(sampleValue(body, 't_depth', { state: 'waiting' })).toBe(9);
    m.collectProcessMetrics();
    const names = metricNames((await m.render()).body);
    for (const n of ['nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_gc_duration_seconds']) expect(names).toContain(n);
  });
});

describe('the exposition', () => {
  it('renders counters, gauges and histograms exactly as prom-client renders its own metrics', async () => {
    const { Counter, Gauge, Histogram, Registry } = await import('prom-client');
    const reference = new Registry();
    const c = new Counter({ name: 't_calls_total', help: 'calls', labelNames: ['outcome'], registers: [reference] });
    const g = new Gauge({ name: 't_open', help: 'open', labelNames: ['mode'], registers: [reference] });
    const h = new Histogram({ name: 't_wait_seconds', help: 'wait', labelNames: ['kind'], buckets: [0.1, 1, 10], registers: [reference] });
    const n = new Counter({ name: 't_plain_total', help: 'plain', registers: [reference] });
    n.inc(0);

    const m = new Metrics();
    const mc = m.counter({ name: 't_calls_total', help: 'calls', labels: { outcome: ['ok', 'failed'] } });
    const mg = m.gauge({ name: 't_open', help: 'open', labels: { mode: ['proxy'] } });
    const mh = m.histogram({ name: 't_wait_seconds', help: 'wait', labels: { kind: ['a', 'b'] }, buckets: [0.1, 1, 10] });
    m.counter({ name: 't_plain_total', help: 'plain' });

    for (const [outcome, by] of [
      ['ok', 1],
      ['failed', 2],
      ['ok', 3],
    ] as const) {
      c.inc({ outcome }, by);
      mc.inc({ outcome }, by);
    }
    g.inc({ mode: 'proxy' }, 3);
    g.dec({ mode: 'proxy' });
    mg.inc({ mode: 'proxy' }, 3);
    mg.dec({ mode: 'proxy' });
    // Below the first bucket, on a bound, between bounds, above the last (only +Inf counts it).
    for (const [kind, v] of [
      ['a', 0.05],
      ['a', 1],
      ['b', 5],
      ['a', 50],
    ] as const) {
      h.observe({ kind }, v);
      mh.observe({ kind }, v);
    }
    expect((await m.render()).body).toBe(await reference.metrics());
  });
});
