import { Controller, Delete, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callerOf } from './caller.js';
import { ResponsesService } from './responses.service.js';

@Controller('v1/responses')
export class ResponsesController {
  constructor(private readonly responses: ResponsesService) {}

  @Post()
  async create(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // The answer (a stream or one JSON body) is written to the raw socket by the service.
    reply.hijack();
    await this.responses.create({ body: req.body, caller: callerOf(req), requestId: req.id, res: reply.raw });
  }

  @Get(':id')
  get(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.responses.get(callerOf(req), id);
  }

  @Delete(':id')
  delete(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.responses.delete(callerOf(req), id);
  }
}
