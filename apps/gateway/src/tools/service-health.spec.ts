import { describe, expect, it } from 'vitest';
import type { NatsRpcClient } from '@drael/nats-rpc';
import type { GatewayConfig } from '../config/config.schema.js';
import { ServiceHealth } from './service-health.js';

const config = { DRAEL_TOOL_HEALTH_TTL_MS: 60_000, DRAEL_TOOL_HEALTH_TIMEOUT_MS: 100 } as GatewayConfig;

describe('ServiceHealth', () => {
  it('asks once, then answers from the fresh probe at once, with no promise (issue 20)', async () => {
    let asked = 0;
    const rpc = { request: async () => void asked++ } as unknown as NatsRpcClient;
    const health = new ServiceHealth(rpc, config);
    const first = health.isUp('search');
    expect(first).toBeInstanceOf(Promise);
    // A second caller while the probe is in flight shares it.
    expect(health.isUp('search')).toBe(first);
    expect(await first).toBe(true);
    expect(health.isUp('search')).toBe(true);
    expect(asked).toBe(1);
  });

  it('a service that does not answer is down, and stays down until the probe is stale', async () => {
    const rpc = { request: async () => Promise.reject(new Error('no responders')) } as unknown as NatsRpcClient;
    const health = new ServiceHealth(rpc, config);
    expect(await health.isUp('fetch')).toBe(false);
    expect(health.isUp('fetch')).toBe(false);
  });

  it('a stale probe is asked again', async () => {
    let up = true;
    const rpc = { request: async () => (up ? undefined : Promise.reject(new Error('down'))) } as unknown as NatsRpcClient;
    const health = new ServiceHealth(rpc, { ...config, DRAEL_TOOL_HEALTH_TTL_MS: 0 });
    expect(await health.isUp('sandbox')).toBe(true);
    up = false;
    expect(await health.isUp('sandbox')).toBe(false);
  });
});
