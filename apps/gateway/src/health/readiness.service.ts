import { Inject, Injectable } from '@nestjs/common';
import { healthEntry, type ServiceName } from '@drael/contracts';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { RateLimiter } from '../rate-limit/rate-limiter.service.js';
import { ModelRouter, type DeploymentReport } from '../upstream/model-router.service.js';

export interface Readiness {
  ready: boolean;
  /** A NATS round trip succeeded just now (not merely "the connection object is open"). */
  nats: boolean;
  /** Key verification (billing) answers: without it no request but a cached key's can be served. */
  key_verification: boolean;
  /** Each backend service: 'ok' or its error code. */
  services: Record<string, string>;
  /** Why each service that is not 'ok' failed, as it said (e.g. `docker: connect ENOENT ...`). */
  unavailable: Record<string, string>;
  /** Services down whose tools are out of the catalogue and whose routes answer 503; not a readiness failure. */
  degraded: string[];
  /** The rate-limit counters' Redis: 'ok' or why not (limits then hold per replica; not a readiness failure). */
  redis: string;
  /** What makes the gateway not ready: `draining` (SIGTERM), `nats`, `billing`. */
  failing: string[];
  /** Each model deployment's state; a cooling one never makes the gateway unready. */
  deployments: Record<string, DeploymentReport>;
}

// Key verification (billing.keys.verify.v1) is the only backend every request needs.
const KEY_VERIFICATION: ServiceName = 'billing';

/**
 * Ready = the gateway can serve: NATS answers a round trip and key verification (billing)
 * answers. Any other backend that is down only degrades: its tools leave the catalogue and its
 * routes answer a typed 503 (the tool layer's ServiceHealth), while plain chat keeps working, so
 * one sandbox pod down never takes every gateway pod out of its Service.
 */
@Injectable()
export class ReadinessService {
  constructor(
    private readonly rpc: NatsRpcClient,
    private readonly limiter: RateLimiter,
    private readonly router: ModelRouter,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  private draining = false;

  /** From SIGTERM on, readiness fails (`draining`) while requests are still served. */
  startDraining(): void {
    this.draining = true;
  }

  async check(): Promise<Readiness> {
    const timeoutMs = this.config.READY_TIMEOUT_MS;
    const asked = [...new Set<ServiceName>([KEY_VERIFICATION, ...this.config.DRAEL_BACKEND_SERVICES])];
    const services: Record<string, string> = {};
    const unavailable: Record<string, string> = {};
    const [nats, redis] = await Promise.all([
      within(this.rpc.connection.rtt(), timeoutMs).then(
        () => true,
        () => false,
      ),
      within(this.limiter.ping(), timeoutMs).then(
        () => 'ok',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      ),
      ...asked.map(async (service) => {
        try {
          await this.rpc.request(healthEntry(service), {}, { timeoutMs });
          services[service] = 'ok';
        } catch (err) {
          services[service] = isRpcError(err) ? err.code : 'unavailable';
          unavailable[service] = err instanceof Error ? err.message : String(err);
        }
      }),
    ]);
    const keyVerification = services[KEY_VERIFICATION] === 'ok';
    const failing = [...(this.draining ? ['draining'] : []), ...(nats ? [] : ['nats']), ...(keyVerification ? [] : [KEY_VERIFICATION])];
    const degraded = Object.keys(services)
      .filter((s) => services[s] !== 'ok' && s !== KEY_VERIFICATION)
      .sort();
    return { ready: failing.length === 0, nats, key_verification: keyVerification, services, unavailable, degraded, redis, failing, deployments: this.router.report() };
  }
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
