import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { validateBody } from '../../openai/validate.js';
import { SearchToolRequestSchema, type SearchToolResponse } from './search-tool.schema.js';
import { SearchToolService } from './search-tool.service.js';

@Controller('v1/tools')
export class SearchToolController {
  constructor(private readonly search: SearchToolService) {}

  @Post('search')
  @HttpCode(200)
  run(@Body() body: unknown): Promise<SearchToolResponse> {
    return this.search.search(validateBody(SearchToolRequestSchema, body));
  }
}
