import { Controller, Get, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ModelRegistry } from './model-registry.js';

@Controller('v1/models')
export class ModelsController {
  constructor(private readonly models: ModelRegistry) {}

  @Get()
  list() {
    return { object: 'list', data: this.models.list() };
  }

  // An alias may hold a slash (`openai/gpt-5.5`): the wildcard takes the rest of the path.
  @Get('*')
  retrieve(@Req() req: FastifyRequest) {
    return this.models.retrieve((req.params as Record<string, string | undefined>)['*'] ?? '');
  }
}
