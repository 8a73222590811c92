import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@drael/logger';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { CONTAINER_RUNTIME, type ContainerRuntime } from '../runtime/container-runtime.js';
import { EgressFirewall } from './egress-firewall.js';
import { SandboxError } from '../sandbox-error.js';

/** Network-on runs happen only on the egress network and only while its firewall is in place. */
@Injectable()
export class EgressGuard {
  private readonly firewall: EgressFirewall;

  constructor(
    @Inject(SANDBOX_CONFIG) config: SandboxConfig,
    @Inject(CONTAINER_RUNTIME) private readonly runtime: ContainerRuntime,
  ) {
    this.firewall = new EgressFirewall(config.SANDBOX_EGRESS_BRIDGE);
  }

  async setUp(logger: Pick<Logger, 'warn'>): Promise<void> {
    try {
      await this.runtime.ensureEgressNetwork();
      await this.firewall.ensure();
    } catch (err) {
      logger.warn({ err }, 'egress network or firewall not set up; runs with network: true will be refused');
    }
  }

  /** Checked before every network run: fail closed if someone flushed the rules. */
  async assertReady(): Promise<void> {
    if (await this.firewall.verify()) return;
    try {
      await this.runtime.ensureEgressNetwork();
      await this.firewall.ensure();
    } catch {
      // fall through to the refusal
    }
    if (!(await this.firewall.verify())) {
      throw new SandboxError('unavailable', 'network access for sandbox runs is not available right now (egress firewall not in place)', true);
    }
  }
}
