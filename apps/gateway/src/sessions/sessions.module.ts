import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SessionsController } from './sessions.controller.js';
import { WorkspacesModule } from './workspaces.module.js';

/** The upload route as Fastify routed it (never the raw URL, which an encoding can disguise). */
const UPLOAD_ROUTE = '/v1/sessions/:id/files/*';
const RAW_BYTES = 'application/octet-stream';

function isUpload(req: FastifyRequest): boolean {
  return req.method === 'PUT' && req.routeOptions.url === UPLOAD_ROUTE;
}

@Module({
  imports: [WorkspacesModule],
  controllers: [SessionsController],
})
export class SessionsModule implements OnModuleInit {
  constructor(private readonly http: HttpAdapterHost) {}

  /**
   * File uploads carry raw bytes of any type, up to the gateway's body limit (BODY_LIMIT_BYTES;
   * the service writes them to the sandbox in pieces). Whatever the client calls them (a `.jsonl`
   * sent as application/json, an empty or half-written JSON file), the bytes are stored as they
   * came: the upload route's body is read as raw bytes before any parser sees its Content-Type.
   * The gateway otherwise accepts JSON only, so the raw parser answers every other route 415.
   */
  onModuleInit(): void {
    const fastify = this.http.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('preParsing', (req, _reply, payload, done) => {
      if (isUpload(req)) req.headers['content-type'] = RAW_BYTES;
      done(null, payload);
    });
    fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
      if (!isUpload(req)) {
        const err = Object.assign(new Error(`Unsupported Media Type: ${String(req.headers['content-type'])}`), {
          code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
          statusCode: 415,
        });
        done(err, undefined);
        return;
      }
      done(null, body);
    });
  }
}
