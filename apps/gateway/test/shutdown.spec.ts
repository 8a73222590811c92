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
});
