import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './gateway-process.js';

export interface PrometheusProcess {
  readonly url: string;
  /** Prometheus's `/api/v1/targets` active targets: job, scrape URL, health and last error. */
  targets(): Promise<{ job: string; scrapeUrl: string; health: string; lastError: string }[]>;
  /** An instant query; the result vector. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

/**
 * A real Prometheus server (Debian's `prometheus`) scraping the given targets every second, with
 * its own storage in a temporary directory, on a free port. `jobs` maps a job name to host:port
 * targets whose /metrics it scrapes.
 */
export async function startPrometheus(jobs: Record<string, string[]>, ruleFiles: string[] = []): Promise<PrometheusProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'drael-prom-'));
  const port = await freePort();
  const config = [
    'global: { scrape_interval: 1s, evaluation_interval: 1s, scrape_timeout: 900ms }',
    `rule_files: ${JSON.stringify(ruleFiles)}`,
    'scrape_configs:',
    ...Object.entries(jobs).map(([job, targets]) => `  - { job_name: ${JSON.stringify(job)}, static_configs: [{ targets: ${JSON.stringify(targets)} }] }`),
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config);
  const child = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus exited with ${child.exitCode}:\n${out}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus was not ready in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    targets: async () =>
      (await api<{ activeTargets: { labels: { job: string }; scrapeUrl: string; health: string; lastError: string }[] }>('/api/v1/targets')).activeTargets.map((t) => ({
        job: t.labels.job,
        scrapeUrl: t.scrapeUrl,
        health: t.health,
        lastError: t.lastError,
      })),
    query: async (expr) => (await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    stop,
  };
}

/** The text of a process's GET /metrics. */
export async function scrapeMetrics(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (!res.ok) throw new Error(`GET ${baseUrl}/metrics: ${res.status}`);
  return res.text();
}
