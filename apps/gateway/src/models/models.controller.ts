import { Controller, Get } from '@nestjs/common';
import { ModelRegistry } from './model-registry.js';

@Controller('v1/models')
export class ModelsController {
  constructor(private readonly models: ModelRegistry) {}

  @Get()
  list() {
    return { object: 'list', data: this.models.list() };
  }
}
