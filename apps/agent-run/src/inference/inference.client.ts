import { Inject, Injectable } from '@nestjs/common';
import { gatewayCatalog, inferenceRouteToken, type InferenceChatReply, type InferenceChatRequest } from '@drael/contracts';
import { isRpcError, NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';

// Failures worth another try: the gateway marks an upstream 429/5xx/invalid answer retryable;
// an upstream or NATS timeout and an unreachable upstream are transient too.
const TRANSIENT = new Set(['upstream_timeout', 'upstream_unreachable', 'timeout', 'unavailable']);

export function isRetryableInferenceError(err: unknown): boolean {
  return isRpcError(err) && (err.retryable || TRANSIENT.has(err.code));
}

/**
 * Model calls of agent runs, through the gateway's own inference subject: the same routing,
 * policy, rate limit and usage as the public API (spec 03: agents have no special privileges).
 * A retryable failure is tried again with exponential backoff and jitter, a bounded number of
 * times; the calls are not streamed, so a failed attempt produced no output and costs nothing.
 *
 * Each call goes to the routed subject of its model alias, which only gateways serving the alias
 * answer (issue 19): never a gateway with another alias set. When none answers through every
 * attempt, the run ends `model_not_found` (fail closed), not with a transport error.
 */
@Injectable()
export class InferenceClient {
  constructor(
    private readonly rpc: NatsRpcClient,
    @Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig,
  ) {}

  /** The reply and how many attempts it took. */
  async chat(request: InferenceChatRequest, signal: AbortSignal): Promise<{ reply: InferenceChatReply; attempts: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return { reply: await this.rpc.request(gatewayCatalog.inferenceChat, request, { signal, route: inferenceRouteToken(request.model) }), attempts: attempt };
      } catch (err) {
        if (signal.aborted || attempt > this.config.AGENT_RUN_INFERENCE_RETRIES || !isRetryableInferenceError(err)) throw noGatewayServes(err, request.model);
        const backoff = this.config.AGENT_RUN_INFERENCE_RETRY_BASE_MS * 2 ** (attempt - 1);
        await sleep(backoff / 2 + Math.random() * (backoff / 2), signal);
      }
    }
  }
}

/**
 * "No responders" on the alias's routed subject: no gateway serves that alias (or none is up).
 * It is the gateway's own answer to an unknown alias (gateway.inference.chat.v1 declares
 * model_not_found), so it is built as that reply, not as an error of agent-run's.
 */
function noGatewayServes(err: unknown, model: string): unknown {
  if (!(isRpcError(err) && err.code === 'unavailable' && err.details?.reason === 'no_responders')) return err;
  return RpcError.fromWire({ code: 'model_not_found', message: `no gateway serves the model alias "${model}"`, retryable: false, details: { model } });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
