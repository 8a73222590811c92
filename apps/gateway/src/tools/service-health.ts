import { Inject, Injectable } from '@nestjs/common';
import { healthEntry, type ServiceName } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';

interface Probe {
  up: boolean;
  at: number;
  pending?: Promise<boolean>;
}

/**
 * Whether a backend service answers its health subject, remembered for a few seconds so that
 * deciding the catalogue costs no NATS round trip per request. A tool whose service does not
 * answer is not served (spec 01: "a tool with no provider wired behind it is not served at all").
 */
@Injectable()
export class ServiceHealth {
  private readonly probes = new Map<ServiceName, Probe>();

  constructor(
    private readonly rpc: NatsRpcClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** A fresh answer at once; otherwise the probe in flight, or a new one. */
  isUp(service: ServiceName): boolean | Promise<boolean> {
    const probe = this.probes.get(service);
    const now = Date.now();
    if (probe && now - probe.at < this.config.DRAEL_TOOL_HEALTH_TTL_MS) return probe.up;
    if (probe?.pending) return probe.pending;
    const pending = this.ask(service).then((up) => {
      this.probes.set(service, { up, at: Date.now() });
      return up;
    });
    this.probes.set(service, { up: probe?.up ?? false, at: probe?.at ?? 0, pending });
    return pending;
  }

  private async ask(service: ServiceName): Promise<boolean> {
    try {
      await this.rpc.request(healthEntry(service), {}, { timeoutMs: this.config.DRAEL_TOOL_HEALTH_TIMEOUT_MS });
      return true;
    } catch {
      return false;
    }
  }
}
