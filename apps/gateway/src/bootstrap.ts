import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { PinoNestLogger, createAccessLog, withRequestId, type Logger } from '@drael/logger';
import { currentTraceId, nameHttpRoute, traceRequests } from '@drael/tracing';
import { AppModule } from './app.module.js';
import { connectGatewaySubjects } from './inference/inference.module.js';
import type { GatewayConfig } from './config/config.schema.js';
import { OpenAIExceptionFilter } from './errors/openai-exception.filter.js';
import { apiErrorOf, writeClientError, writeErrorResponse } from './errors/error-response.js';
import { AdminToken } from './auth/admin-token.js';
import { refuseUnread, registerRouteAccess } from './auth/route-access.hook.js';
import { lingerIfBodyUnread } from './http/lingering-close.js';
import { ApiError } from './errors/api-error.js';
import { closeStalledConnections } from './http/stalled-connections.js';
import { endResumableStreams } from './http/open-streams.js';
import { answerBareRefusals, refuseMissingHost } from './http/bare-refusals.js';
import { continueWhenBodyIsRead } from './http/expect-continue.js';
import { registerJsonBodyParser } from './http/json-body.parser.js';
import { requestIdOf } from './http/request-id.js';
import { KeyGate } from './auth/key-gate.service.js';
import { ChatCompletionsService } from './chat/chat-completions.service.js';
import { KeyedJsonPostRoute, type HotRoute } from './http/hot-route.js';
import { RouteMethods } from './http/route-methods.js';
import { CorsPolicy } from './http/cors.js';
import { searchToolRoute } from './tools-api/search/search-tool.route.js';
import { SearchToolService } from './tools-api/search/search-tool.service.js';
import { metrics, setMetricsEnabled, startMetricsHttp, type MetricsHttpServer } from '@drael/metrics';
import { recordHttpRequest } from './metrics/gateway.metrics.js';
import { ReadinessService } from './health/readiness.service.js';

export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  /** Where GET /metrics is served (METRICS_PORT), if it is. */
  metricsUrl?: string;
  /** SIGTERM's first step: /readyz answers 503 from now on; everything else is still served. */
  startDraining(): void;
  close(): Promise<void>;
}

/** Builds and starts the gateway's HTTP server. */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  // The hot routes are served ahead of Fastify (http/hot-route.ts); they exist once Nest has
  // built the services, before the server listens, and step aside while shutting down.
  let hotRoutes: readonly HotRoute[] = [];
  // Browser access (http/cors.ts), built with the route table; undefined while CORS is off.
  let cors: CorsPolicy | undefined;
  setMetricsEnabled(config.METRICS_ENABLED);
  if (config.METRICS_ENABLED) metrics.collectProcessMetrics();
  let stopping = false;
  // Set once the access log exists (below); nothing is answered before the server listens.
  let recordAnsweredAhead: (req: IncomingMessage, res: ServerResponse, requestId: string, route: string) => void = () => {};
  const serverFactory = (fastifyHandler: RequestListener) => {
    const server = createServer(
      {
        headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
        requestTimeout: Math.max(config.HTTP_REQUEST_TIMEOUT_MS, config.HTTP_HEADERS_TIMEOUT_MS),
        // How often Node checks the two above (its default, 30 s, would answer a 10 s bound after 40).
        connectionsCheckingInterval: Math.min(1_000, config.HTTP_HEADERS_TIMEOUT_MS / 2),
        // Node's own refusal of an HTTP/1.1 request without Host has an empty body: refused in the
        // envelope by refuseMissingHost instead (http/bare-refusals.ts).
        requireHostHeader: false,
      },
      // Each request in a server span, the client's traceparent its parent (tracing off: as is).
      traceRequests((req: IncomingMessage, res: ServerResponse) => {
        const refused = refuseMissingHost(req, res);
        if (refused !== undefined) return recordAnsweredAhead(req, res, refused, 'unmatched');
        if (cors && req.headers.origin !== undefined) {
          const preflight = cors.answerPreflight(req, res);
          if (preflight !== undefined) return recordAnsweredAhead(req, res, preflight, 'cors_preflight');
          cors.allowAnswer(req, res);
        }
        if (!stopping) {
          for (const route of hotRoutes) {
            if (route.matches(req)) {
              nameHttpRoute(route.method, route.path);
              void route.serve(req, res);
              return;
            }
          }
        }
        fastifyHandler(req, res);
      }),
    );
    closeStalledConnections(server, { bodyIdleMs: config.HTTP_BODY_IDLE_TIMEOUT_MS, sendIdleMs: config.HTTP_SEND_IDLE_TIMEOUT_MS });
    answerBareRefusals(server);
    continueWhenBodyIsRead(server);
    return server;
  };
  const adapter = new FastifyAdapter({
    serverFactory,
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: requestIdOf,
    requestIdHeader: false,
    // Our own JSON access line per request (below); Fastify's logger would add a second one.
    logger: false,
    return503OnClosing: true,
    // Transport-level refusals in the envelope too: what Node's parser rejects (400, 408, 431) and
    // what the router rejects before any route is matched (bad percent-encoding 400, 414).
    clientErrorHandler: writeClientError,
    frameworkErrors: (error: Error, req: FastifyRequest, reply: FastifyReply) =>
      writeErrorResponse(reply.raw, apiErrorOf(error), String(req.id), lingerIfBodyUnread(req.raw) ? { connection: 'close' } : undefined),
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    bodyParser: false,
    logger: new PinoNestLogger(logger),
  });
  const fastify = app.getHttpAdapter().getInstance();
  registerJsonBodyParser(fastify);
  // Before Nest registers its routes (app.listen → init): each gets its access hook.
  const routes = registerRouteAccess(fastify, { gate: app.get(KeyGate), admin: new AdminToken(config.DRAEL_ADMIN_TOKEN) });
  const routeMethods = new RouteMethods(fastify);

  fastify.addHook('onRequest', (req, reply, done) => {
    void reply.header('x-request-id', req.id);
    // No route: 405 when the path has routes of other methods, else 404, before Fastify would
    // read and parse a body for the not-found handler.
    if (req.is404) {
      const refusal = routeMethods.refusalFor(req.method, req.url) ?? new ApiError('not_found', `Unknown route: ${req.method} ${req.url.split('?', 1)[0]}`);
      return refuseUnread(req, reply, done, refusal);
    }
    nameHttpRoute(req.method, req.routeOptions.url ?? req.url);
    done();
  });
  // After the body is read: the handler runs inside the request id's context, so its log lines
  // and its NATS requests carry the id.
  fastify.addHook('preHandler', (req, _reply, done) => withRequestId(req.id, done));
  const accessLog = createAccessLog(logger, 'gateway');
  fastify.addHook('onResponse', (req, reply, done) => {
    accessLog(req.id, req.method, req.url, reply.raw.statusCode, Math.round(reply.elapsedTime * 10) / 10, currentTraceId());
    recordHttpRequest(req.routeOptions.url ?? 'unmatched', req.method, reply.raw, reply.elapsedTime);
    done();
  });

  // An answer given ahead of the routes (a Host-less HTTP/1.1 request, a CORS preflight) writes
  // its access line and counts in the HTTP metric as a routed one does: an operator sees every
  // request that reached the gateway. Its duration is given as 0: the answer is written whole,
  // synchronously, before this runs (tens of µs, under the access line's 0.1 ms), and timing every
  // request for the few answered here would put a clock read on the hot path.
  recordAnsweredAhead = (req, res, requestId, route) => {
    accessLog(requestId, req.method ?? '', req.url ?? '', res.statusCode, 0, currentTraceId());
    recordHttpRequest(route, req.method ?? '', res, 0);
  };

  app.useGlobalFilters(new OpenAIExceptionFilter(logger));
  const hotDeps = { gate: app.get(KeyGate), logger, accessLog, bodyLimit: config.BODY_LIMIT_BYTES };
  const chat = app.get(ChatCompletionsService);
  // The gateway's hot path (every proxied completion): the same ChatCompletionsService.handle as
  // Fastify's ChatCompletionsController, which serves every other spelling of the route.
  hotRoutes = [new KeyedJsonPostRoute('/v1/chat/completions', hotDeps, (call) => chat.handle(call)), searchToolRoute(hotDeps, app.get(SearchToolService))];
  // Nest registers its routes here (listen would do it too); the table is logged before the port
  // opens, so whoever sees the gateway ready can already read it.
  await app.init();
  routeMethods.register(routes.map((r) => r.method));
  // A hot route's path and method are Fastify's too (its Nest controller serves every other
  // spelling), so what the route table says of a path (405's Allow, CORS) holds for them.
  for (const route of hotRoutes) {
    if (!fastify.hasRoute({ method: route.method, url: route.path })) throw new Error(`hot route ${route.method} ${route.path} has no Fastify route`);
  }
  if (config.CORS_ALLOWED_ORIGINS.size > 0) cors = new CorsPolicy(config.CORS_ALLOWED_ORIGINS, routeMethods);
  // The route table with each route's access, once per boot: what is public is never a guess.
  logger.info({ routes: routes.map((r) => `${r.method} ${r.url} ${r.access}`) }, 'routes');
  await connectGatewaySubjects(app, config, logger);
  await app.listen({ host: config.HOST, port: config.PORT });
  // Prometheus scrapes its own port, never the public one (docs/operations.md "Where /metrics is").
  const metricsHttp: MetricsHttpServer | undefined = config.METRICS_PORT === undefined ? undefined : await startMetricsHttp({ port: config.METRICS_PORT, host: config.HOST });
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  let closing: Promise<void> | undefined;
  const close = async () => {
    stopping = true;
    // A run's event stream resumes anywhere with Last-Event-ID: told to go now, not at the grace's end.
    endResumableStreams(new ApiError('service_unavailable', 'The gateway is shutting down; reconnect with Last-Event-ID to resume the stream'));
    // server.close() drops only the connections idle at that moment; a keep-alive connection
    // whose stream ends later would hold shutdown until its keep-alive timeout, so sweep again.
    const sweep = setInterval(() => fastify.server.closeIdleConnections(), 100);
    try {
      await app.close();
    } finally {
      clearInterval(sweep);
      await metricsHttp?.close();
    }
  };
  return {
    app,
    url: `http://${host}:${port}`,
    metricsUrl: metricsHttp && `http://${host}:${metricsHttp.port}`,
    startDraining: () => app.get(ReadinessService).startDraining(),
    close: () => (closing ??= close()),
  };
}
