import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { FetchToolHttpRequestSchema, type FetchPageReply, type KeyIdentity } from '@drael/contracts';
import { CallerIdentity, callerOf } from '../../auth/identity.js';
import { validateBody } from '../../openai/validate.js';
import { FetchToolService } from './fetch-tool.service.js';

@Controller('v1/tools')
export class FetchToolController {
  constructor(private readonly fetcher: FetchToolService) {}

  @Post('fetch')
  @HttpCode(200)
  run(@CallerIdentity() caller: KeyIdentity, @Body() body: unknown): Promise<FetchPageReply> {
    return this.fetcher.fetch(validateBody(FetchToolHttpRequestSchema, body), callerOf(caller));
  }
}
