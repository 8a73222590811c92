import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { PinoNestLogger, createAccessLog, withRequestId, type Logger } from '@drael/logger';
import { AppModule } from './app.module.js';
import { connectGatewaySubjects } from './inference/inference.module.js';
import type { GatewayConfig } from './config/config.schema.js';
import { OpenAIExceptionFilter } from './errors/openai-exception.filter.js';
import { registerJsonBodyParser } from './http/json-body.parser.js';
import { requestIdOf } from './http/request-id.js';
import { KeyGate } from './auth/key-gate.service.js';
import { ChatCompletionsRoute } from './chat/chat-completions.route.js';
import { ChatCompletionsService } from './chat/chat-completions.service.js';
import type { HotRoute } from './http/hot-route.js';
import { SearchToolRoute } from './tools-api/search/search-tool.route.js';
import { SearchToolService } from './tools-api/search/search-tool.service.js';

export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

/** Builds and starts the gateway's HTTP server. */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  // The hot routes are served ahead of Fastify (http/hot-route.ts); they exist once Nest has
  // built the services, before the server listens, and step aside while shutting down.
  let hotRoutes: readonly HotRoute[] = [];
  let stopping = false;
  const serverFactory = (fastifyHandler: RequestListener) =>
    createServer((req: IncomingMessage, res: ServerResponse) => {
      if (!stopping) {
        for (const route of hotRoutes) {
          if (route.matches(req)) {
            void route.serve(req, res);
            return;
          }
        }
      }
      fastifyHandler(req, res);
    });
  const adapter = new FastifyAdapter({
    serverFactory,
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: requestIdOf,
    requestIdHeader: false,
    // Our own JSON access line per request (below); Fastify's logger would add a second one.
    logger: false,
    return503OnClosing: true,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    bodyParser: false,
    logger: new PinoNestLogger(logger),
  });
  const fastify = app.getHttpAdapter().getInstance();
  registerJsonBodyParser(fastify);

  fastify.addHook('onRequest', (req, reply, done) => {
    void reply.header('x-request-id', req.id);
    done();
  });
  // After the body is read: the handler runs inside the request id's context, so its log lines
  // and its NATS requests carry the id.
  fastify.addHook('preHandler', (req, _reply, done) => withRequestId(req.id, done));
  const accessLog = createAccessLog(logger, 'gateway');
  fastify.addHook('onResponse', (req, reply, done) => {
    accessLog(req.id, req.method, req.url, reply.raw.statusCode, Math.round(reply.elapsedTime * 10) / 10);
    done();
  });

  app.useGlobalFilters(new OpenAIExceptionFilter(logger));
  const hotDeps = { gate: app.get(KeyGate), logger, accessLog, bodyLimit: config.BODY_LIMIT_BYTES };
  hotRoutes = [new ChatCompletionsRoute(hotDeps, app.get(ChatCompletionsService)), new SearchToolRoute(hotDeps, app.get(SearchToolService))];
  await connectGatewaySubjects(app, config);
  await app.listen({ host: config.HOST, port: config.PORT });
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  let closing: Promise<void> | undefined;
  const close = async () => {
    stopping = true;
    // server.close() drops only the connections idle at that moment; a keep-alive connection
    // whose stream ends later would hold shutdown until its keep-alive timeout, so sweep again.
    const sweep = setInterval(() => fastify.server.closeIdleConnections(), 100);
    try {
      await app.close();
    } finally {
      clearInterval(sweep);
    }
  };
  return { app, url: `http://${host}:${port}`, close: () => (closing ??= close()) };
}
