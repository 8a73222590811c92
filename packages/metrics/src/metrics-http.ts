import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metrics, type Metrics } from './metrics.js';

/**
 * Answers `GET /metrics` with the registry's text exposition; what it answers is counts and
 * durations under bounded labels (no key, account, session, URL or query), so it needs no
 * credential, and it is only ever served on a port that is not the public one (a service's
 * health port, the gateway's METRICS_PORT), which no Ingress routes.
 */
export function writeMetrics(res: ServerResponse, registry: Metrics = metrics): void {
  registry.render().then(
    ({ contentType, body }) => {
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      res.end(body);
    },
    () => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"metrics_unavailable"}');
    },
  );
}

export interface MetricsHttpServer {
  readonly port: number;
  close(): Promise<void>;
}

/** A port that serves only GET /metrics (the gateway's METRICS_PORT). */
export async function startMetricsHttp(options: { port: number; host?: string; registry?: Metrics }): Promise<MetricsHttpServer> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'application/json' });
      return res.end('{"error":"method_not_allowed"}');
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end('{"error":"not_found"}');
    }
    writeMetrics(res, options.registry);
  });
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
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
