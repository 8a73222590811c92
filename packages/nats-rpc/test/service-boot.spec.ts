import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { COMMON_ERROR_CODES, defineEntry, healthEntry } from '@drael/contracts';
import { testPrefix } from './fixtures/prefix.js';
import { NatsRpcClient } from '../src/index.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const fixture = new URL('./fixtures/boot-fixture.mjs', import.meta.url).pathname;
const echo = defineEntry({
  subject: 'search.echo.v1',
  service: 'search',
  request: z.object({ text: z.string(), delay_ms: z.number().int().optional() }),
  reply: z.object({ text: z.string() }),
  errors: COMMON_ERROR_CODES,
  timeoutMs: 5_000,
});

function boot(env: Record<string, string>) {
  const child = spawn(process.execPath, [fixture], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return { child, exit, output: () => out };
}

async function waitHealthy(client: NatsRpcClient) {
  for (let i = 0; i < 100; i++) {
    try {
      return await client.request(healthEntry('search'), {}, { timeoutMs: 300 });
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('service never became healthy');
}

describe('service boot and shutdown', () => {
  it('boots, answers health in its queue group, logs JSON with the request id, and drains on SIGTERM before exiting 0', async () => {
    const prefix = testPrefix('boot');
    const svc = boot({ NATS_URL, DRAEL_NATS_PREFIX: prefix, LOG_LEVEL: 'info' });
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
    try {
      const health = await waitHealthy(client);
      expect(health.service).toBe('search');

      // A request in flight when SIGTERM arrives still gets its answer.
      const slow = client.request(echo, { text: 'finish me', delay_ms: 700 }, { requestId: 'rid-boot-1' });
      await new Promise((r) => setTimeout(r, 200));
      svc.child.kill('SIGTERM');
      await expect(slow).resolves.toEqual({ text: 'finish me' });
      expect(await svc.exit).toBe(0);

      const lines = svc
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.length).toBeGreaterThan(0);
      const echoLine = lines.find((l) => l.msg === 'echo received');
      expect(echoLine).toMatchObject({ service: 'search', request_id: 'rid-boot-1' });
      expect(lines.some((l) => l.msg === 'draining')).toBe(true);
      // Each lifecycle hook ran once (Nest's microservice init ran them twice: two BullMQ workers in agent-run).
      const hooks = lines.filter((l) => l.msg === 'lifecycle hook').map((l) => l.hook);
      expect(hooks).toEqual(['onModuleInit', 'onApplicationBootstrap']);
    } finally {
      svc.child.kill('SIGKILL');
      await client.close();
    }
  });

  it('a bad variable stops boot with a message naming it', async () => {
    const svc = boot({ NATS_URL: 'http://not-nats', LOG_LEVEL: 'loud' });
    expect(await svc.exit).toBe(1);
    expect(svc.output()).toContain('NATS_URL');
    expect(svc.output()).toContain('LOG_LEVEL');
    expect(svc.output()).toContain('boot failed');
  });
});
