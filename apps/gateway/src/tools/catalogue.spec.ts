/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are free-form JSON read by the assertions */
import { getEncoding } from 'js-tiktoken';
import { describe, expect, it } from 'vitest';
import type { NatsRpcClient } from '@drael/nats-rpc';
import type { GatewayConfig } from '../config/config.schema.js';
import { ToolCatalogue } from './catalogue.service.js';
import type { SessionFilesService } from '../sessions/session-files.service.js';
import type { BillingHolds } from './billing-holds.js';
import { GenerateImageTool } from './generate-image.tool.js';
import { BreachLookupTool, ContactLookupTool } from './lookup.tools.js';
import { RunCodeTool } from './run-code.tool.js';
import type { ServiceHealth } from './service-health.js';
import { SpawnAgentTool } from './spawn-agent.tool.js';
import { TOOL_NAMES } from './server-tool.js';
import { WebFetchTool } from './web-fetch.tool.js';
import { WebSearchTool } from './web-search.tool.js';

// Every provider wired: the largest catalogue a request can be served.
const up = { isUp: async () => true } as unknown as ServiceHealth;
const config = {
  DRAEL_IMAGE_PROVIDER: { base_url: 'http://127.0.0.1:1', api_key: '', model: 'm', size: '1024x1024', timeout_ms: 1 },
  DRAEL_BREACH_PROVIDER: { url: 'http://127.0.0.1:1', api_key: '', timeout_ms: 1 },
  DRAEL_CONTACT_PROVIDER: { url: 'http://127.0.0.1:1', api_key: '', timeout_ms: 1 },
} as unknown as GatewayConfig;
const rpc = {} as NatsRpcClient;
const holds = {} as BillingHolds;
const files = {} as SessionFilesService;

function catalogue(health = up) {
  return new ToolCatalogue(
    new RunCodeTool(rpc, health),
    new WebSearchTool(rpc, health),
    new WebFetchTool(rpc, health),
    new GenerateImageTool(config, holds, health, files),
    new BreachLookupTool(config, holds, health),
    new ContactLookupTool(config, holds, health),
    new SpawnAgentTool(),
  );
}
const caller = { account_id: 'a', tool_level: 'l4_browser' as const, plan: 'pro' };

describe('the catalogue', () => {
  it('serves all seven tools at once when everything is wired, under the ceiling of eight', async () => {
    const served = await catalogue().served(caller, { subAgent: false });
    expect(served.definitions.map((d) => d.function.name)).toEqual([...TOOL_NAMES]);
    expect(served.definitions.length).toBeLessThanOrEqual(8);
  });

  it('the whole served catalogue is at most 1,000 tokens (o200k_base)', async () => {
    const served = await catalogue().served(caller, { subAgent: false });
    const tokens = getEncoding('o200k_base').encode(JSON.stringify(served.definitions)).length;
    console.log(`served catalogue: ${tokens} tokens (o200k_base)`);
    expect(tokens).toBeLessThanOrEqual(1000);
  });

  it('a tool whose provider is not wired is not served', async () => {
    const onlyBilling = { isUp: async (s: string) => s === 'billing' } as unknown as ServiceHealth;
    const served = await catalogue(onlyBilling).served(caller, { subAgent: false });
    expect(served.definitions.map((d) => d.function.name)).toEqual(['generate_image', 'breach_lookup', 'contact_lookup', 'spawn_agent']);
  });

  it('the key tool level narrows it; a sub-agent never gets spawn_agent', async () => {
    const c = catalogue();
    expect((await c.served({ ...caller, tool_level: 'none' }, { subAgent: false })).definitions).toEqual([]);
    const l1 = (await c.served({ ...caller, tool_level: 'l1_http' }, { subAgent: false })).definitions.map((d) => d.function.name);
    expect(l1).not.toContain('run_code');
    expect(l1).toContain('web_search');
    const child = (await c.served(caller, { subAgent: true })).definitions.map((d) => d.function.name);
    expect(child).not.toContain('spawn_agent');
  });

  it('is decided at once, with no promise, when every health answer is fresh; after the probes when one is not (issue 20)', async () => {
    const fresh = { isUp: () => true } as unknown as ServiceHealth;
    const now = catalogue(fresh).served(caller, { subAgent: false });
    expect(now).not.toBeInstanceOf(Promise);
    expect((now as Awaited<typeof now>).definitions.map((d) => d.function.name)).toEqual([...TOOL_NAMES]);
    // One probe still asking: the same catalogue, once it answers.
    const oneAsking = { isUp: (s: string) => (s === 'sandbox' ? Promise.resolve(true) : true) } as unknown as ServiceHealth;
    const later = catalogue(oneAsking).served(caller, { subAgent: false });
    expect(later).toBeInstanceOf(Promise);
    expect((await later).definitionsJson).toBe((now as Awaited<typeof now>).definitionsJson);
    // And a probe that answers "down" takes its tool out, as before.
    const sandboxDown = { isUp: (s: string) => (s === 'sandbox' ? Promise.resolve(false) : true) } as unknown as ServiceHealth;
    expect((await catalogue(sandboxDown).served(caller, { subAgent: false })).definitions.map((d) => d.function.name)).not.toContain('run_code');
  });

  it('requests of one tool level share one frozen catalogue, serialised once (issue 20)', async () => {
    const c = catalogue();
    const first = await c.served(caller, { subAgent: false });
    const other = await c.served({ account_id: 'b', tool_level: 'l4_browser', plan: 'free' }, { subAgent: false });
    expect(other).toBe(first);
    expect(first.definitionsJson).toBe(JSON.stringify(first.definitions));
    expect(Object.isFrozen(first.definitions)).toBe(true);
    expect(Object.isFrozen(first.definitions[0]!.function.parameters)).toBe(true);
    // Another level, or a sub-agent, is served its own.
    expect(await c.served({ ...caller, tool_level: 'l1_http' }, { subAgent: false })).not.toBe(first);
    expect((await c.served(caller, { subAgent: true })).definitionsJson).not.toContain('spawn_agent');
  });

  it('a tool whose service goes down leaves the shared catalogue at once, and comes back with it', async () => {
    let searchUp = true;
    const health = { isUp: async (s: string) => s !== 'search' || searchUp } as unknown as ServiceHealth;
    const c = catalogue(health);
    const names = async () => (await c.served(caller, { subAgent: false })).definitions.map((d) => d.function.name);
    expect(await names()).toContain('web_search');
    searchUp = false;
    expect(await names()).not.toContain('web_search');
    expect((await c.served(caller, { subAgent: false })).tools.has('web_search')).toBe(false);
    searchUp = true;
    expect(await names()).toContain('web_search');
  });

  it('spawn_agent offers only the roles the key level allows', async () => {
    const l1 = await catalogue().served({ ...caller, tool_level: 'l1_http' }, { subAgent: false });
    const spawn = l1.definitions.find((d) => d.function.name === 'spawn_agent')!;
    expect((spawn.function.parameters as any).properties.role.enum).toEqual(['researcher']);
  });
});
