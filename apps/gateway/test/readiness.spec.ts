/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are probed field by field */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startBillingForTests, startGatewayProcess, testPrefix, type GatewayProcess, type ServiceProcess } from '@drael/test-support';
import { startLoopHarness, toolNames, type LoopHarness } from './turn-loop.support.js';

// Readiness degrades instead of failing whole (issue 17): the gateway is ready while it can serve
// (NATS answers, key verification answers); a backend that is down leaves the catalogue and is
// listed under `degraded`, and never takes the gateway out of its Service.

const ask = [{ role: 'user', content: 'Say hi.' }];
const ADMIN_TOKEN = 'admin-token-for-readiness-tests-0123456789';

async function readyz(url: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${url}/readyz`, { headers });
  return { status: r.status, body: (await r.json()) as any };
}

describe('with the sandbox service stopped', () => {
  let h: LoopHarness;

  beforeAll(async () => {
    // TTL 0: the catalogue asks the sandbox's health on every request, so the test sees the stop at once.
    h = await startLoopHarness({ services: ['sandbox'], env: { DRAEL_BACKEND_SERVICES: 'sandbox', DRAEL_TOOL_HEALTH_TTL_MS: '0', DRAEL_ADMIN_TOKEN: ADMIN_TOKEN } });
  }, 240_000);
  afterAll(async () => {
    await h?.close();
  }, 60_000);

  async function offered(): Promise<{ tools: string[]; text: string }> {
    h.script([{ type: 'text', content: 'hi' }]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask });
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    return { tools: toolNames(h.upstream.requests[before]!.body), text: body.choices[0].message.content };
  }

  it('while it runs: /readyz is 200 "ready" and run_code is offered', async () => {
    const r = await readyz(h.gateway.url, { 'x-request-id': 'ready-probe-1' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'ready', nats: true, key_verification: true, services: { sandbox: 'ok', billing: 'ok' }, degraded: [], failing: [] });
    expect((await offered()).tools).toContain('run_code');
  });

  it('stopped: /readyz stays 200 ("degraded", naming sandbox), run_code leaves the catalogue, plain chat still answers', async () => {
    const sandbox = h.services.find((s) => s.service === 'sandbox')!;
    await sandbox.stop();
    const r = await readyz(h.gateway.url);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('degraded');
    expect(r.body.degraded).toEqual(['sandbox']);
    expect(r.body.services.sandbox).not.toBe('ok');
    expect(r.body.failing).toEqual([]);
    // Anyone's answer names no error and no deployment (it may name internal hosts, and the
    // deployments' counters would show the installation's traffic); the operator's does.
    expect(r.body.unavailable).toBeUndefined();
    expect(r.body.deployments).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toMatch(/no responders|in_flight/i);
    const operator = await readyz(h.gateway.url, { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(operator.body.unavailable.sandbox).toEqual(expect.any(String));
    expect(operator.body.deployments).toEqual(expect.any(Object));
    expect((await readyz(h.gateway.url, { authorization: `Bearer ${h.apiKey}` })).body.unavailable).toBeUndefined();
    const chat = await offered();
    expect(chat.tools).not.toContain('run_code');
    expect(chat.text).toBe('hi');
  });

  it('a key that cannot be checked in time (billing frozen) is a 503 to retry with Retry-After, not a 504', async () => {
    const fresh = await h.newKey();
    const billing = h.gateway.billing!;
    billing.child.kill('SIGSTOP');
    try {
      const r = await fetch(`${h.gateway.url}/v1/models`, { headers: { authorization: `Bearer ${fresh.api_key}` } });
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('2');
      expect(((await r.json()) as any).error).toMatchObject({ code: 'unavailable', type: 'service_unavailable_error' });
    } finally {
      billing.child.kill('SIGCONT');
    }
  });

  it('with key verification (billing) gone too: /readyz is 503 in the OpenAI envelope naming billing', async () => {
    await h.gateway.billing!.stop();
    const r = await readyz(h.gateway.url);
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ type: 'service_unavailable_error', code: 'service_unavailable' });
    expect(r.body.error.message).toContain('key verification');
    expect(r.body).toMatchObject({ status: 'not_ready', nats: true, key_verification: false, failing: ['billing'] });
  });
});

describe('NATS reported truthfully', () => {
  let nats: ChildProcess | undefined;
  let gateway: GatewayProcess | undefined;
  let billing: ServiceProcess | undefined;
  let storeDir: string;

  beforeAll(async () => {
    // A NATS server of this test's own: the machine's shared one is never stopped.
    const port = await freePort();
    storeDir = mkdtempSync(join(tmpdir(), 'ready-nats-'));
    nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    const url = `nats://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      const up = await fetch(`http://127.0.0.1:${port}`).then(
        () => true,
        (e: any) => e.cause?.code !== 'ECONNREFUSED',
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const prefix = testPrefix('ready');
    gateway = await startGatewayProcess({ NATS_URL: url, DRAEL_NATS_PREFIX: prefix, DRAEL_BACKEND_SERVICES: 'billing', READY_TIMEOUT_MS: '500' }, { billing: false });
    billing = await startBillingForTests({ NATS_URL: url, DRAEL_NATS_PREFIX: prefix });
  }, 120_000);
  afterAll(async () => {
    await billing?.stop('SIGKILL');
    await gateway?.stop();
    nats?.kill('SIGKILL');
    rmSync(storeDir, { recursive: true, force: true });
  }, 60_000);

  it('/readyz says nats: true while NATS answers, and 503 nats: false once the server is gone', async () => {
    const up = await readyz(gateway!.url);
    expect(up.status).toBe(200);
    expect(up.body.nats).toBe(true);
    nats!.kill('SIGKILL');
    await new Promise((r) => nats!.once('exit', r));
    const down = await readyz(gateway!.url);
    expect(down.status).toBe(503);
    expect(down.body.nats).toBe(false);
    expect(down.body.failing).toContain('nats');
  });

  it('/healthz answers while the process is up, whatever NATS does', async () => {
    const r = await fetch(`${gateway!.url}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ok' });
  });
});
