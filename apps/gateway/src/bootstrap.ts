import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { PinoNestLogger, withRequestId, type Logger } from '@drael/logger';
import { AppModule } from './app.module.js';
import { connectGatewaySubjects } from './inference/inference.module.js';
import type { GatewayConfig } from './config/config.schema.js';
import { OpenAIExceptionFilter } from './errors/openai-exception.filter.js';
import { registerJsonBodyParser } from './http/json-body.parser.js';
import { requestIdOf } from './http/request-id.js';

export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

/** Builds and starts the gateway's HTTP server. */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  const adapter = new FastifyAdapter({
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
  fastify.addHook('onResponse', (req, reply, done) => {
    logger.info(
      { request_id: req.id, method: req.method, url: req.url, status: reply.raw.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
    done();
  });

  app.useGlobalFilters(new OpenAIExceptionFilter(logger));
  await connectGatewaySubjects(app, config);
  await app.listen({ host: config.HOST, port: config.PORT });
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  let closing: Promise<void> | undefined;
  const close = async () => {
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
