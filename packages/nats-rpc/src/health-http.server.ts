import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NatsConnection } from '@nats-io/transport-node';
import { metrics, writeMetrics } from '@drael/metrics';
import { runHealthChecks, HEALTH_CHECK_TIMEOUT_MS, type HealthCheck } from './health-checks.js';

export interface HealthHttpOptions {
  service: string;
  port: number;
  host?: string;
  checks: readonly HealthCheck[];
  /** The service's NATS connection (its work arrives there): checked with a round trip. */
  nats: () => NatsConnection | undefined;
  /** True once SIGTERM started the drain: readiness then says so. */
  draining: () => boolean;
}

export interface HealthHttpServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A NATS-only service's HTTP health port, so Kubernetes probes are `httpGet` (no Node process
 * started per probe). Two GET routes, nothing else, on plain node:http: a framework would add a
 * second server stack to a process that otherwise serves only NATS.
 *   /healthz  liveness: the event loop answers (never asks a dependency: a dead database must
 *             not restart every healthy pod).
 *   /readyz   200 when NATS answers a round trip and every critical dependency answers; 503 with
 *             `{status, failing, checks}` naming the ones that do not.
 *   /metrics  Prometheus text exposition (packages/metrics): counts and durations under bounded
 *             labels, nothing that names a caller; this port is cluster-internal (no Ingress).
 */
export async function startHealthHttp(options: HealthHttpOptions): Promise<HealthHttpServer> {
  scraped = options;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { error: 'method_not_allowed' });
    if (path === '/healthz') return send(200, { status: 'ok', service: options.service });
    if (path === '/metrics') return writeMetrics(res);
    if (path !== '/readyz') return send(404, { error: 'not_found' });
    void readiness(options).then(
      (r) => send(r.ok ? 200 : 503, { status: r.ok ? 'ready' : 'not_ready', service: options.service, failing: r.failing, checks: r.checks }),
      () => send(503, { status: 'not_ready', service: options.service }),
    );
  });
  // A probe connection must not keep a draining process alive.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        if (scraped === options) scraped = undefined;
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function checksOf(options: HealthHttpOptions): HealthCheck[] {
  const natsCheck: HealthCheck = {
    name: 'nats',
    check: async () => {
      const nc = options.nats();
      if (!nc) throw new Error('not connected');
      await nc.rtt();
    },
  };
  return [natsCheck, ...options.checks];
}

/** The service whose dependencies a scrape checks (one health port per process). */
let scraped: HealthHttpOptions | undefined;
// The same checks as /readyz, run at scrape time (each bounded by HEALTH_CHECK_TIMEOUT_MS), so an
// alert names the dependency that is down (docs/operations.md, DraelDependencyDown).
metrics.gauge({
  name: 'drael_dependency_up',
  help: 'Whether a dependency of this service answers its health check (1) or not (0), by dependency (nats, postgres, redis, searxng, docker, chromium)',
  labels: { dependency: 20 },
  collect: async (set) => {
    if (!scraped) return;
    const r = await runHealthChecks(checksOf(scraped), HEALTH_CHECK_TIMEOUT_MS);
    for (const [dependency, result] of Object.entries(r.checks)) set({ dependency }, result === 'ok' ? 1 : 0);
  },
});

async function readiness(options: HealthHttpOptions) {
  const r = await runHealthChecks(checksOf(options), HEALTH_CHECK_TIMEOUT_MS);
  if (options.draining()) {
    r.ok = false;
    r.failing = ['draining', ...r.failing];
    r.checks.draining = 'SIGTERM received: finishing work in flight';
  }
  return r;
}
