import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';

let upstream: ScriptedUpstream;
let gateway: GatewayProcess;

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [{ type: 'text', content: ['first', ' second', ' third'], pauseAfterChunks: 2 }] });
  gateway = await startGatewayProcess({
    DRAEL_NATS_PREFIX: testPrefix('stop'),
    DRAEL_MODELS: JSON.stringify({ m: { base_url: upstream.baseUrl, model: 'm' } }),
  });
});

afterAll(async () => {
  await gateway?.stop('SIGKILL');
  await upstream?.close();
});

describe('SIGTERM', () => {
  it('stops taking requests, lets the open stream finish, then exits 0', async () => {
    const r = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-drael-server-tools': '0', ...gateway.authHeaders },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('first')) text += decoder.decode((await reader.read()).value, { stream: true });

    gateway.child.kill('SIGTERM');
    // New connections are refused once the listener closes (give the signal a moment to land).
    const deadline = Date.now() + 10_000;
    let refused = false;
    while (!refused && Date.now() < deadline) {
      refused = await fetch(`${gateway.url}/healthz`, { headers: { connection: 'close' } }).then(
        (res) => res.status === 503,
        () => true,
      );
      if (!refused) await new Promise((res) => setTimeout(res, 50));
    }
    expect(refused).toBe(true);
    expect(gateway.child.exitCode).toBeNull();

    upstream.resume();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const events = parseSse(text);
    expect(events.at(-1)).toBe('[DONE]');
    expect(await gateway.exited).toBe(0);
    expect(gateway.output()).toContain('"msg":"stopped"');
  });

  it('ends a stream still open when the grace runs out with an error event in its protocol, not a cut connection, then exits', async () => {
    // An answer that pauses and is never resumed: longer than any grace.
    const stuck = await startScriptedUpstream({ turns: [{ type: 'text', content: ['first', ' never'], pauseAfterChunks: 2 }] });
    const short = await startGatewayProcess({
      DRAEL_NATS_PREFIX: testPrefix('stopg'),
      DRAEL_MODELS: JSON.stringify({ m: { base_url: stuck.baseUrl, model: 'm' } }),
      SHUTDOWN_GRACE_MS: '1000',
    });
    try {
      const r = await fetch(`${short.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-drael-server-tools': '0', ...short.authHeaders },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }),
      });
      const reader = r.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('first')) text += decoder.decode((await reader.read()).value, { stream: true });
      short.child.kill('SIGTERM');
      // Read to the end: a cut connection would reject here instead.
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      const last = parseSse(text).at(-1) as { error?: { code?: string } };
      expect(last.error).toMatchObject({ code: 'service_unavailable', type: 'service_unavailable_error' });
      // Its drain then completes (exit 0), or the last writes' moment ends first (exit 1).
      expect([0, 1]).toContain(await short.exited);
      expect(short.output()).toContain('open requests did not finish in time');
    } finally {
      await short.stop('SIGKILL');
      await stuck.close();
    }
  });

  it('with SHUTDOWN_DELAY_MS, answers /readyz 503 at once and keeps serving until the delay is over', async () => {
    const delayed = await startGatewayProcess({
      DRAEL_NATS_PREFIX: testPrefix('stopd'),
      DRAEL_MODELS: JSON.stringify({ m: { base_url: upstream.baseUrl, model: 'm' } }),
      SHUTDOWN_DELAY_MS: '4000',
    });
    try {
      expect((await fetch(`${delayed.url}/readyz`)).status).toBe(200);
      delayed.child.kill('SIGTERM');
      await expect.poll(async () => (await fetch(`${delayed.url}/readyz`)).status, { timeout: 3000, interval: 50 }).toBe(503);
      const readyz = (await (await fetch(`${delayed.url}/readyz`)).json()) as { status: string; failing: string[]; error: { code: string } };
      expect(readyz).toMatchObject({ status: 'not_ready', error: { code: 'service_unavailable' } });
      expect(readyz.failing).toContain('draining');
      // Still serving: a keyed request on a fresh connection, while the delay runs.
      const models = await fetch(`${delayed.url}/v1/models`, { headers: { ...delayed.authHeaders, connection: 'close' } });
      expect(models.status).toBe(200);
      expect(delayed.child.exitCode).toBeNull();
      // Then the listener closes and the process exits 0.
      expect(await delayed.exited).toBe(0);
      await expect(fetch(`${delayed.url}/healthz`)).rejects.toThrow();
    } finally {
      await delayed.stop('SIGKILL');
    }
  });
});
