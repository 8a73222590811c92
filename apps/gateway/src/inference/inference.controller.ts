import { Controller } from '@nestjs/common';
import { gatewayCatalog, type InferenceChatRequest } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { InferenceService } from './inference.service.js';

/** gateway.inference.chat.v1: model calls of agent runs, through the gateway's own pipeline. */
@Controller()
export class InferenceController {
  constructor(private readonly inference: InferenceService) {}

  @Handles(gatewayCatalog.inferenceChat)
  chat(req: InferenceChatRequest) {
    return this.inference.chat(req);
  }
}
