import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { listQueryOf } from '../openai/list-query.js';
import { callerOf, identityOf } from '../turn-loop/caller.js';
import { ResponsesService } from './responses.service.js';

/**
 * /v1/responses. The caller is the key identity the auth guard verified, resolved the same way as
 * for chat completions (turn-loop/caller.ts), so stored responses are scoped to its account.
 */
@Controller('v1/responses')
export class ResponsesController {
  constructor(
    private readonly responses: ResponsesService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Post()
  async create(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // The answer (a stream or one JSON body) is written to the raw socket by the service.
    reply.hijack();
    await this.responses.create({ body: req.body, caller: callerOf(identityOf(req), this.config), requestId: req.id, res: reply.raw });
  }

  @Get(':id')
  get(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.responses.get(callerOf(identityOf(req), this.config), id);
  }

  @Get(':id/input_items')
  inputItems(@Req() req: FastifyRequest, @Param('id') id: string, @Query() query: unknown) {
    return this.responses.inputItems(callerOf(identityOf(req), this.config), id, listQueryOf(query));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.responses.cancel(callerOf(identityOf(req), this.config), id);
  }

  @Delete(':id')
  delete(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.responses.delete(callerOf(identityOf(req), this.config), id);
  }
}
