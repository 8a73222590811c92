import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ChatCompletionsService } from './chat-completions.service.js';
import { rawBodyOf } from '../http/json-body.parser.js';
import { identityOf } from '../turn-loop/caller.js';

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
