import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { SessionsController } from './sessions.controller.js';
import { WorkspacesModule } from './workspaces.module.js';

const SESSION_FILES = /^\/v1\/sessions\/[^/]+\/files\//;

@Module({
  imports: [WorkspacesModule],
  controllers: [SessionsController],
})
export class SessionsModule implements OnModuleInit {
  constructor(private readonly http: HttpAdapterHost) {}

  /**
   * File uploads carry raw bytes of any type, up to the gateway's body limit (BODY_LIMIT_BYTES;
   * the service writes them to the sandbox in pieces). The gateway otherwise accepts JSON only,
   * so the parser answers every other route with the same 415 as before.
   */
  onModuleInit(): void {
    const fastify = this.http.httpAdapter.getInstance<FastifyInstance>();
    fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
      if (!SESSION_FILES.test(req.url)) {
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
