import { Inject, Injectable } from '@nestjs/common';
import { healthEntry } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ModelRouter, type DeploymentReport } from '../upstream/model-router.service.js';

export interface Readiness {
  ready: boolean;
  nats: boolean;
  services: Record<string, string>; // 'ok' or the error code
  failing: string[];
  /** Each model deployment's state; a cooling one never makes the gateway unready. */
  deployments: Record<string, DeploymentReport>;
}

/** Ready = NATS connected and every backend service answers its health subject (asked in parallel). */
@Injectable()
export class ReadinessService {
  constructor(
    private readonly rpc: NatsRpcClient,
    private readonly router: ModelRouter,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async check(): Promise<Readiness> {
    const nats = this.rpc.isConnected;
    const services: Record<string, string> = {};
    await Promise.all(
      this.config.DRAEL_BACKEND_SERVICES.map(async (service) => {
        try {
          await this.rpc.request(healthEntry(service), {}, { timeoutMs: this.config.READY_TIMEOUT_MS });
          services[service] = 'ok';
        } catch (err) {
          services[service] = (err as { code?: string }).code ?? 'unavailable';
        }
      }),
    );
    const failing = [...(nats ? [] : ['nats']), ...Object.keys(services).filter((s) => services[s] !== 'ok')].sort();
    return { ready: failing.length === 0, nats, services, failing, deployments: this.router.report() };
  }
}
