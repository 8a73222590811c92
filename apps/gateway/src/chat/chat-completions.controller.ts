import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { identityOf } from '../auth/identity.js';
import { rawBodyOf } from '../http/json-body.parser.js';
import { ChatCompletionsService } from './chat-completions.service.js';

/**
 * POST /v1/chat/completions as Fastify routes it: every spelling the hot route leaves to Fastify
 * (`/%761/...`, a query string, a Content-Encoding, another JSON content type), after the route's
 * access hook admitted the key. The same call reaches the same ChatCompletionsService.handle as
 * the hot route's (bootstrap.ts); this only reads it off Fastify's request.
 */
@Controller('v1/chat')
export class ChatCompletionsController {
  constructor(private readonly chat: ChatCompletionsService) {}

  @Post('completions')
  async create(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // The answer is written to the raw socket as the upstream sends it; Fastify stays out of it.
    reply.hijack();
    await this.chat.handle({ body: req.body, rawBody: rawBodyOf(req), headers: req.headers, requestId: req.id, res: reply.raw, identity: identityOf(req) });
  }
}
