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
 * answer (issue 19): never a gateway with another alias set. No gateway answering is most often
 * a moment, not a verdict: every gateway restarting, or a rolling update (attack pass 3: one
 * gateway restarted in 5 s, and a run in flight failed `model_not_found` after 0.75 s of retries).
 * So that wait has its own budget, AGENT_RUN_INFERENCE_UNSERVED_WAIT_MS, apart from the retries of
 * other failures: asked again, backing off up to a second or two, for as long as that. Only a
 * whole budget of silence ends the run `model_not_found` (fail closed), not a transport error.
 */
@Injectable()
export class InferenceClient {
  constructor(
    private readonly rpc: NatsRpcClient,
    @Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig,
  ) {}

  /** The reply and how many attempts it took. */
  async chat(request: InferenceChatRequest, signal: AbortSignal): Promise<{ reply: InferenceChatReply; attempts: number }> {
    let retries = 0;
    let unservedSince: number | undefined;
    let unservedTries = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        return { reply: await this.rpc.request(gatewayCatalog.inferenceChat, request, { signal, route: inferenceRouteToken(request.model) }), attempts: attempt };
      } catch (err) {
        if (signal.aborted) throw err;
        if (isUnserved(err)) {
          unservedSince ??= Date.now();
          const waited = Date.now() - unservedSince;
          const wait = this.config.AGENT_RUN_INFERENCE_UNSERVED_WAIT_MS;
          if (waited >= wait) throw noGatewayServes(request.model, wait);
          await sleep(Math.min(wait - waited, jittered(Math.min(UNSERVED_BACKOFF_CAP_MS, this.config.AGENT_RUN_INFERENCE_RETRY_BASE_MS * 2 ** unservedTries++))), signal);
          continue;
        }
        if (retries >= this.config.AGENT_RUN_INFERENCE_RETRIES || !isRetryableInferenceError(err)) throw err;
        await sleep(jittered(this.config.AGENT_RUN_INFERENCE_RETRY_BASE_MS * 2 ** retries++), signal);
      }
    }
  }
}

// The longest pause between two asks while no gateway answers: a gateway back up is found soon.
const UNSERVED_BACKOFF_CAP_MS = 2_000;

/** Half the delay, plus up to the other half at random (replicas retrying together spread out). */
const jittered = (ms: number) => ms / 2 + Math.random() * (ms / 2);

/** "No responders" on the alias's routed subject: no gateway serving that alias is up right now. */
function isUnserved(err: unknown): boolean {
  return isRpcError(err) && err.code === 'unavailable' && err.details?.reason === 'no_responders';
}

/**
 * No gateway served the alias for the whole wait. It is the gateway's own answer to an unknown
 * alias (gateway.inference.chat.v1 declares model_not_found), so it is built as that reply, not
 * as an error of agent-run's.
 */
function noGatewayServes(model: string, waitedMs: number): RpcError {
  return RpcError.fromWire({
    code: 'model_not_found',
    message: `no gateway served the model alias "${model}" for ${Math.round(waitedMs / 1000)} s (none that serves it is up)`,
    retryable: false,
    details: { model },
  });
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
