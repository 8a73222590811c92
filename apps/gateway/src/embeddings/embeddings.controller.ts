import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rawBodyOf } from '../http/json-body.parser.js';
import { EmbeddingsService } from './embeddings.service.js';

/** POST /v1/embeddings (OpenAI's), for any key: the answer is the deployment's, written to the raw socket. */
@Controller('v1')
export class EmbeddingsController {
  constructor(private readonly embeddings: EmbeddingsService) {}

  @Post('embeddings')
  async create(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.hijack();
    await this.embeddings.handle({ body: req.body, rawBody: rawBodyOf(req), requestId: req.id, res: reply.raw });
  }
}
