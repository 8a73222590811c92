import { z } from 'zod';
import { baseEnvShape, envInt, envList } from '@drael/config';
import { BACKEND_SERVICES } from '@drael/contracts';
import { toolsEnvShape } from '../tools/tools.config.js';
import { responsesConfigShape } from '../responses/responses.config.js';
import { authConfigShape } from '../auth/auth.config.js';
import { rateLimitConfigShape } from '../rate-limit/rate-limit.config.js';
import { adminConfigShape } from '../admin/admin.config.js';
import { httpConfigShape } from '../http/http.config.js';
import { consoleConfigShape } from '../console/console.config.js';
import { modelsEnvSchema, routerConfigShape } from '../models/model-routes.config.js';

export const configSchema = z.object({
  ...baseEnvShape,
  // The turn loop's tools: providers, cost ceiling, health cache (apps/gateway/src/tools/tools.config.ts).
  ...toolsEnvShape,
  // The Responses API's Redis store (apps/gateway/src/responses/responses.config.ts).
  ...responsesConfigShape,
  // API keys, rate limits and the admin API (apps/gateway/src/{auth,rate-limit,admin}).
  ...authConfigShape,
  ...rateLimitConfigShape,
  ...adminConfigShape,
  // Header and body timeouts of the HTTP server (apps/gateway/src/http/http.config.ts).
  ...httpConfigShape,
  // Where the console's built files are (apps/gateway/src/console).
  ...consoleConfigShape,
  HOST: z.string().default('0.0.0.0'),
  PORT: envInt(0, 65535).default(8080),
  // GET /metrics for Prometheus on its own port, never the public one (docs/operations.md); unset: not served.
  METRICS_PORT: envInt(0, 65535).optional(),
  // DRAEL_MODELS: alias → one upstream or a list of deployments (models/model-routes.config.ts, README "Model routing").
  DRAEL_MODELS: modelsEnvSchema.default({}),
  // Retries, fallbacks and shared cooldowns over an alias's deployments.
  ...routerConfigShape,
  // Services /readyz asks; comma separated. Defaults to every backend service.
  DRAEL_BACKEND_SERVICES: envList(BACKEND_SERVICES.join(',')).pipe(z.array(z.enum(BACKEND_SERVICES))),
  READY_TIMEOUT_MS: envInt(50, 10_000).default(1_000),
  // Time allowed for the upstream to send response headers (first byte for non-streaming answers).
  UPSTREAM_HEADERS_TIMEOUT_MS: envInt(100, 3_600_000).default(120_000),
  // Longest silence allowed between two body chunks of the upstream.
  UPSTREAM_BODY_TIMEOUT_MS: envInt(100, 3_600_000).default(300_000),
  // Most connections the gateway opens to one upstream origin; 0 (the default) sets no cap. A
  // streamed answer holds its HTTP/1.1 connection for its whole length, so a cap below the streams
  // a replica serves queues the rest behind whole answers, unseen and outside the headers timeout
  // (undici starts it once a request has a connection); bench/load measured it. The requests a
  // replica admits already bound the connections; set a cap only for an upstream that takes fewer
  // (README "Model routing").
  UPSTREAM_CONNECTIONS: envInt(0, 65_536).default(0),
  BODY_LIMIT_BYTES: envInt(1024, 256 * 1024 * 1024).default(32 * 1024 * 1024),
  // After SIGTERM, how long the gateway keeps serving while GET /readyz answers 503 (draining),
  // so that a load balancer polling readiness stops sending it new requests before its listener
  // closes. 0 under Kubernetes, whose preStop pause does this (endpoints are removed first).
  SHUTDOWN_DELAY_MS: envInt(0, 600_000).default(0),
  // How long SIGTERM (after SHUTDOWN_DELAY_MS) lets open requests and streams finish before the
  // process exits anyway.
  SHUTDOWN_GRACE_MS: envInt(0, 3_600_000).default(30_000),
  // A streamed catalogue answer silent this long (tools running, a sub-agent researching) opens
  // and sends an SSE comment, again each time: a proxy's idle timeout in front (nginx's 60 s) never
  // cuts it. Its failures are then in-band error events.
  STREAM_KEEPALIVE_MS: envInt(1_000, 300_000).default(15_000),
  // Run event streams (GET /v1/runs/{id}/events) one account may hold open on this replica; past
  // it 429 too_many_event_streams (attack report F5). Counted per replica: each open stream is a
  // long poll on agent-run that this replica holds, and it ends when its client goes.
  RUN_EVENT_STREAMS_PER_ACCOUNT: envInt(1, 100_000).default(20),
});
export type GatewayConfig = z.infer<typeof configSchema>;
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
