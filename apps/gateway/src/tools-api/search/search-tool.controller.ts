import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { KeyIdentity } from '@drael/contracts';
import { CallerIdentity } from '../../auth/identity.js';
import { validateBody } from '../../openai/validate.js';
import { SearchToolRequestSchema, type SearchToolResponse } from './search-tool.schema.js';
import { SearchToolService } from './search-tool.service.js';

@Controller('v1/tools')
export class SearchToolController {
  constructor(private readonly search: SearchToolService) {}

  @Post('search')
  @HttpCode(200)
  async run(@CallerIdentity() caller: KeyIdentity, @Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<SearchToolResponse> {
    const answer = await this.search.search(validateBody(SearchToolRequestSchema, body), caller);
    if (answer.serverTiming) void reply.header('server-timing', answer.serverTiming);
    return answer.body;
  }
}
