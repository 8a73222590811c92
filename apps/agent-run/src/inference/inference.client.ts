import { Injectable } from '@nestjs/common';
import { gatewayCatalog, type InferenceChatReply, type InferenceChatRequest } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';

/**
 * Model calls of agent runs, through the gateway's own inference subject: the same routing,
 * policy, rate limit and usage as the public API (spec 03: agents have no special privileges).
 */
@Injectable()
export class InferenceClient {
  constructor(private readonly rpc: NatsRpcClient) {}

  chat(request: InferenceChatRequest, signal: AbortSignal): Promise<InferenceChatReply> {
    return this.rpc.request(gatewayCatalog.inferenceChat, request, { signal });
  }
}
