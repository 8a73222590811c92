import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RequestCaller, type Caller } from '../auth/identity.js';
import { KeyGate } from '../auth/key-gate.service.js';
import { listQueryOf } from '../openai/list-query.js';
import { ResponsesService } from './responses.service.js';

/**
 * /v1/responses. The caller is the key identity the auth guard verified (auth/identity.ts), so
 * stored responses are scoped to its account.
 */
@Controller('v1/responses')
export class ResponsesController {
  constructor(
    private readonly responses: ResponsesService,
    private readonly keys: KeyGate,
  ) {}

  @Post()
  async create(@RequestCaller() caller: Caller, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // The answer (a stream or one JSON body) is written to the raw socket by the service.
    reply.hijack();
    await this.responses.create({ body: req.body, caller, requestId: req.id, res: reply.raw, recheckKey: this.keys.recheckOf(req.headers) });
  }

  @Get(':id')
  get(@RequestCaller() caller: Caller, @Param('id') id: string, @Query() query: unknown) {
    return this.responses.get(caller, id, query);
  }

  @Get(':id/input_items')
  inputItems(@RequestCaller() caller: Caller, @Param('id') id: string, @Query() query: unknown) {
    return this.responses.inputItems(caller, id, listQueryOf(query));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@RequestCaller() caller: Caller, @Param('id') id: string) {
    return this.responses.cancel(caller, id);
  }

  @Delete(':id')
  delete(@RequestCaller() caller: Caller, @Param('id') id: string) {
    return this.responses.delete(caller, id);
  }
}
