/* eslint-disable @typescript-eslint/no-explicit-any -- the rule file and dashboard are plain YAML/JSON probed field by field */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { Metrics, metricNames } from '@drael/metrics';

// Issue 18: the alert and recording rules load in a real Prometheus toolchain (`promtool check
// rules`), each alert fires on its condition and stays quiet otherwise (`promtool test rules`),
// and the dashboard and the rules name only metrics that some Drael process defines.

const repo = resolve(new URL('../../../..', import.meta.url).pathname);
const ruleDoc = parse(readFileSync(join(repo, 'k8s', 'monitoring', 'prometheusrule.yaml'), 'utf8'));
const groups: any[] = ruleDoc.spec.groups;
const alerts = new Map<string, any>(
  groups
    .flatMap((g) => g.rules)
    .filter((r: any) => r.alert)
    .map((r: any) => [r.alert, r]),
);
const dir = mkdtempSync(join(tmpdir(), 'drael-rules-'));
const rulesFile = join(dir, 'rules.yml');
writeFileSync(rulesFile, stringify({ groups }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const promtool = (...args: string[]) => execFileSync('promtool', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** One input series for promtool: `name{labels}` and its values, one per minute. */
const s = (series: string, values: string) => ({ series, values });
const gw = (status: string, values: string, extra = '') =>
  s(`drael_gateway_http_request_duration_seconds_count{route="/v1/chat/completions",method="POST",mode="proxy",status_class="${status}"${extra}}`, values);
const own = (name: string, values: string) => s(`drael_gateway_http_request_duration_seconds_${name}{route="/v1/models",method="GET",mode="none"}`, values);
/** Requests of the gateway's own routes that finished within 1 s. */
const bucket1 = (values: string) => s('drael_gateway_http_request_duration_seconds_bucket{route="/v1/models",method="GET",mode="none",le="1"}', values);

interface Case {
  alert: string;
  /** What makes it fire, and when it is checked. */
  fire: { series: ReturnType<typeof s>[]; at: string; labels: Record<string, string> };
  /** A near miss: the same shape of traffic on the good side of the threshold. */
  quiet: { series: ReturnType<typeof s>[]; at: string };
}

const CASES: Case[] = [
  {
    alert: 'DraelGatewayErrorBudgetBurnFast',
    fire: { series: [gw('5xx', '0+10x90'), gw('2xx', '0+90x90')], at: '70m', labels: {} },
    quiet: { series: [gw('5xx', '0+5x90'), gw('2xx', '0+95x90')], at: '70m' },
  },
  {
    alert: 'DraelGatewayErrorBudgetBurnSlow',
    fire: { series: [gw('5xx', '0+5x420'), gw('2xx', '0+95x420')], at: '400m', labels: {} },
    quiet: { series: [gw('5xx', '0+2x420'), gw('2xx', '0+98x420')], at: '400m' },
  },
  {
    alert: 'DraelGatewayLatencyBudgetBurn',
    fire: { series: [bucket1('0+50x90'), own('count', '0+100x90')], at: '70m', labels: {} },
    quiet: { series: [bucket1('0+99x90'), own('count', '0+100x90')], at: '70m' },
  },
  {
    alert: 'DraelUpstreamFailures',
    fire: {
      series: [
        s('drael_gateway_upstream_attempts_total{alias="fast",deployment="a"}', '0+100x30'),
        s('drael_gateway_upstream_failures_total{alias="fast",deployment="a",kind="server_error"}', '0+50x30'),
      ],
      at: '15m',
      labels: { alias: 'fast' },
    },
    quiet: {
      series: [
        s('drael_gateway_upstream_attempts_total{alias="fast",deployment="a"}', '0+100x30'),
        // A client's own 4xx is not the upstream failing.
        s('drael_gateway_upstream_failures_total{alias="fast",deployment="a",kind="client_error"}', '0+50x30'),
        s('drael_gateway_upstream_failures_total{alias="fast",deployment="a",kind="server_error"}', '0+5x30'),
      ],
      at: '15m',
    },
  },
  {
    alert: 'DraelSandboxBusyRefusals',
    fire: {
      series: [
        s('drael_sandbox_run_duration_seconds_count{runtime="python",outcome="busy"}', '0+10x30'),
        s('drael_sandbox_run_duration_seconds_count{runtime="python",outcome="ok"}', '0+90x30'),
      ],
      at: '15m',
      labels: {},
    },
    quiet: {
      series: [
        s('drael_sandbox_run_duration_seconds_count{runtime="python",outcome="busy"}', '0+1x30'),
        s('drael_sandbox_run_duration_seconds_count{runtime="python",outcome="ok"}', '0+99x30'),
      ],
      at: '15m',
    },
  },
  {
    alert: 'DraelSandboxQueueDepth',
    fire: { series: [s('drael_sandbox_queue_depth{instance="s1"}', '9x20'), s('drael_sandbox_queue_capacity{instance="s1"}', '10x20')], at: '10m', labels: {} },
    quiet: { series: [s('drael_sandbox_queue_depth{instance="s1"}', '2x20'), s('drael_sandbox_queue_capacity{instance="s1"}', '10x20')], at: '10m' },
  },
  {
    alert: 'DraelFetchBrowserQueueDepth',
    fire: { series: [s('drael_fetch_browser_queue_depth{instance="f1"}', '15x20'), s('drael_fetch_browser_queue_capacity{instance="f1"}', '16x20')], at: '10m', labels: {} },
    quiet: { series: [s('drael_fetch_browser_queue_depth{instance="f1"}', '4x20'), s('drael_fetch_browser_queue_capacity{instance="f1"}', '16x20')], at: '10m' },
  },
  {
    alert: 'DraelHoldsOpenPastExpiry',
    fire: { series: [s('drael_billing_holds_open_past_expiry{instance="b1"}', '3x20')], at: '15m', labels: {} },
    // Past expiry for less than the sweeper's grace (then swept): quiet.
    quiet: { series: [s('drael_billing_holds_open_past_expiry{instance="b1"}', '3 3 3 0x20')], at: '15m' },
  },
  {
    alert: 'DraelAgentQueueBacklog',
    fire: { series: [s('drael_agent_run_queue_jobs{state="waiting"}', '60x20')], at: '15m', labels: {} },
    quiet: { series: [s('drael_agent_run_queue_jobs{state="waiting"}', '10x20'), s('drael_agent_run_queue_jobs{state="active"}', '80x20')], at: '15m' },
  },
  {
    alert: 'DraelAgentRunsStuck',
    fire: { series: [s('drael_agent_run_runs_lease_expired', '2x20')], at: '15m', labels: {} },
    quiet: { series: [s('drael_agent_run_runs_lease_expired', '0x20')], at: '15m' },
  },
  {
    alert: 'DraelAgentRunRetentionFailing',
    fire: {
      series: [
        s('drael_agent_run_retention_sweeps_total{instance="a1",outcome="failed"}', '0+1x300'),
        s('drael_agent_run_retention_sweeps_total{instance="a1",outcome="ok"}', '5x300'),
      ],
      at: '4h',
      labels: {},
    },
    // Failures on one replica while another's sweeps go through: the table is still kept.
    quiet: {
      series: [
        s('drael_agent_run_retention_sweeps_total{instance="a1",outcome="failed"}', '0+1x300'),
        s('drael_agent_run_retention_sweeps_total{instance="a2",outcome="ok"}', '0+1x300'),
      ],
      at: '4h',
    },
  },
  {
    alert: 'DraelRateLimitRedisDown',
    fire: {
      series: [
        s('drael_gateway_rate_limit_redis_down_decisions_total{instance="g1",policy="fail_open"}', '0+30x20'),
        s('drael_gateway_rate_limit_redis_down_decisions_total{instance="g2",policy="fail_open"}', '0+10x20'),
      ],
      at: '15m',
      labels: { policy: 'fail_open' },
    },
    // An outage that ended: the counter stands still (it only moves while Redis is down).
    quiet: { series: [s('drael_gateway_rate_limit_redis_down_decisions_total{instance="g1",policy="fail_open"}', '0 40 80 120x20')], at: '15m' },
  },
  {
    alert: 'DraelResponsesStoreDown',
    fire: { series: [s('drael_gateway_responses_store_failures_total{instance="g1",operation="admit"}', '0+5x20')], at: '15m', labels: { operation: 'admit' } },
    // A blip that ended: the counter stands still.
    quiet: { series: [s('drael_gateway_responses_store_failures_total{instance="g1",operation="admit"}', '0 3 6 6x20')], at: '15m' },
  },
  {
    alert: 'DraelResponsesStoreFull',
    fire: { series: [s('drael_gateway_responses_store_refusals_total{instance="g1",scope="installation"}', '0+4x20')], at: '15m', labels: {} },
    // One account at its own bound is that account's matter, not the installation's.
    quiet: { series: [s('drael_gateway_responses_store_refusals_total{instance="g1",scope="account"}', '0+4x20')], at: '15m' },
  },
  {
    alert: 'DraelDependencyDown',
    fire: { series: [s('drael_dependency_up{job="billing",instance="b1",dependency="postgres"}', '0x10')], at: '5m', labels: { job: 'billing', dependency: 'postgres' } },
    // A blip shorter than `for`: quiet.
    quiet: { series: [s('drael_dependency_up{job="billing",instance="b1",dependency="postgres"}', '1 0 1x10')], at: '5m' },
  },
  {
    alert: 'DraelTargetDown',
    fire: { series: [s('up{job="fetch",instance="10.0.0.7:9090"}', '0x10')], at: '6m', labels: { job: 'fetch', instance: '10.0.0.7:9090' } },
    quiet: { series: [s('up{job="fetch",instance="10.0.0.7:9090"}', '1x10')], at: '6m' },
  },
];

/** The annotations promtool must see: the rule's, with `{{ $labels.x }}` filled in. */
function annotationsOf(rule: any, labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(rule.annotations as Record<string, string>).map(([k, v]) => [k, v.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, l: string) => labels[l] ?? '')]),
  );
}

describe('alert and recording rules', () => {
  it('load: promtool check rules', () => {
    expect(promtool('check', 'rules', rulesFile)).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('every alert has a unit test case', () => {
    expect(CASES.map((c) => c.alert).sort()).toEqual([...alerts.keys()].sort());
  });

  it.each(CASES.map((c) => [c.alert, c] as const))('%s fires on its condition and stays quiet otherwise (promtool test rules)', (name, c) => {
    const rule = alerts.get(name);
    const labels = { ...c.fire.labels, ...rule.labels };
    const tests = {
      rule_files: [rulesFile],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: c.fire.series,
          alert_rule_test: [{ eval_time: c.fire.at, alertname: name, exp_alerts: [{ exp_labels: labels, exp_annotations: annotationsOf(rule, labels) }] }],
        },
        { interval: '1m', input_series: c.quiet.series, alert_rule_test: [{ eval_time: c.quiet.at, alertname: name, exp_alerts: [] }] },
      ],
    };
    const file = join(dir, `${name}.test.yml`);
    writeFileSync(file, stringify(tests));
    let out: string;
    try {
      out = promtool('test', 'rules', file);
    } catch (err) {
      throw new Error(`promtool test rules failed for ${name}:\n${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`);
    }
    expect(out).toContain('SUCCESS');
  });
});

/**
 * The metric names Drael's processes define: read from each `metrics.counter|gauge|histogram({ name })`
 * in the sources (a histogram also exposes _bucket, _sum, _count), prom-client's process metrics
 * from a real registry, the recording rules' names, and Prometheus's own `up`.
 */
async function definedMetrics(): Promise<Set<string>> {
  const names = new Set<string>(['up']);
  const files: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      if (f === 'node_modules' || f === 'dist' || f === 'generated') continue;
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts') && !p.endsWith('.spec.ts')) files.push(p);
    }
  };
  for (const root of ['apps', 'packages']) for (const d of readdirSync(join(repo, root))) walk(join(repo, root, d, 'src'));
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(/metrics\.(counter|gauge|histogram)(?:<[^>]*>)?\(\{\s*name: '([a-z_:]+)'/g)) {
      names.add(m[2]!);
      if (m[1] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(m[2]! + suffix);
    }
  }
  const node = new Metrics();
  node.collectProcessMetrics();
  const text = (await node.render()).body;
  for (const n of metricNames(text)) names.add(n);
  // A histogram that has observed nothing yet (GC before the first collection) still has these.
  for (const m of text.matchAll(/^# TYPE (\S+) histogram$/gm)) for (const suffix of ['_bucket', '_sum', '_count']) names.add(m[1]! + suffix);
  for (const m of text.matchAll(/^([a-z_:]+)[{ ]/gm)) names.add(m[1]!);
  for (const g of groups) for (const r of g.rules) if (r.record) names.add(r.record);
  return names;
}

/** Metric names an expression uses (identifiers followed by a selector, a range or the end). */
function usedMetrics(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  return [...withoutStrings.matchAll(/\b((?:drael|nodejs|process)[a-z0-9_:]*|up)\b(?!\s*\()/g)].map((m) => m[1]!);
}

describe('the dashboard and the rules name only metrics that exist', () => {
  it('Grafana dashboard (k8s/monitoring/grafana-dashboard.json)', async () => {
    const known = await definedMetrics();
    // Sanity: the reader finds the series the processes define (a broken reader would pass anything).
    for (const n of ['drael_gateway_http_request_duration_seconds_count', 'drael_sandbox_queue_depth', 'nodejs_eventloop_lag_p99_seconds']) expect(known).toContain(n);
    const dash = JSON.parse(readFileSync(join(repo, 'k8s', 'monitoring', 'grafana-dashboard.json'), 'utf8'));
    const exprs: string[] = dash.panels.flatMap((p: any) => (p.targets ?? []).map((t: any) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const unknown = exprs.flatMap(usedMetrics).filter((n) => !known.has(n));
    expect(unknown).toEqual([]);
  });

  it('alert and recording rules', async () => {
    const known = await definedMetrics();
    const unknown = groups
      .flatMap((g) => g.rules)
      .flatMap((r: any) => usedMetrics(String(r.expr)))
      .filter((n: string) => !known.has(n));
    expect(unknown).toEqual([]);
  });
});
