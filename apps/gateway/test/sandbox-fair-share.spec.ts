/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are free-form JSON read by the assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busySandboxContainers } from '@drael/test-support';
import { startLoopHarness, toolMessages, type LoopHarness } from './turn-loop.support.js';

/*
 * Issue F8 through the public API, as the attack made it: account B's one chat request, whose model
 * turn calls run_code 14 times at once (slow runs), and account A's run_code meanwhile. The sandbox
 * runs with two slots and its default tenant share (one slot, eight waiting).
 */
let h: LoopHarness;
const ask = [{ role: 'user', content: 'Work it out.' }];
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });
const N = 14;

beforeAll(async () => {
  h = await startLoopHarness({ services: ['sandbox'], serviceEnv: { sandbox: { SANDBOX_MAX_CONCURRENT: '2', SANDBOX_MAX_CONCURRENT_PER_TENANT: '1', SANDBOX_WARM_POOL: '0' } } });
}, 240_000);
afterAll(async () => {
  await h?.close();
}, 60_000);

describe('one account cannot take the sandbox from the others (F8)', () => {
  it("another account's run_code is answered while one request's many slow runs are in, and none of them runs once that request has ended", { timeout: 240_000 }, async () => {
    const victim = await h.newKey();
    // One script for both requests, in the order the upstream is asked.
    h.script([
      // B, turn 1: the flood.
      { type: 'tool_calls', calls: Array.from({ length: N }, (_, i) => call(`h${i}`, 'run_code', { runtime: 'bash', code: 'sleep 20', timeout_s: 25 })) },
      // A, turn 1 and 2.
      { type: 'tool_calls', calls: [call('a1', 'run_code', { runtime: 'bash', code: 'echo victim-ok', timeout_s: 1 })] },
      { type: 'text', content: 'A done' },
      // B, turn 2.
      { type: 'text', content: 'B done' },
    ]);
    const before = h.upstream.requests.length;
    const tB = Date.now();
    const hog = h.chat({ messages: ask });
    // Awaited below; not an unhandled rejection if an assertion fails first and the harness closes.
    hog.catch(() => undefined);
    await h.upstream.waitForRequests(before + 1, 30_000);
    // B's runs have reached the sandbox.
    await new Promise((r) => setTimeout(r, 3000));

    const tA = Date.now();
    const a = await h.chat({ messages: ask }, { authorization: `Bearer ${victim.api_key}` });
    expect(a.status).toBe(200);
    expect(((await a.json()) as any).choices[0].message.content).toBe('A done');
    expect(toolMessages(h.upstream.requests[before + 2]!.body)[0]!.content).toMatchObject({ ok: true, stdout: 'victim-ok\n' });
    expect(Date.now() - tA).toBeLessThan(15_000);

    const b = await hog;
    expect(b.status).toBe(200);
    expect(((await b.json()) as any).choices[0].message.content).toBe('B done');
    const results = toolMessages(h.upstream.requests[before + 3]!.body).map((m) => m.content);
    expect(results).toHaveLength(N);
    // Past its share, or not started while its request still waited for all of it: refused, retryable, never a hang.
    const refused = results.filter((r) => r.ok === false && r.error === 'sandbox_busy');
    expect(results.filter((r) => r.ok !== true && r.error !== 'sandbox_busy')).toEqual([]);
    expect(refused.length).toBeGreaterThanOrEqual(N - 1 - 8);
    expect(refused.some((r) => /this tenant's share/.test(r.why))).toBe(true);
    // B's request ended within its runs' bound, not after its queue had drained.
    expect(Date.now() - tB).toBeLessThan(75_000);
    // And nothing of it runs on for nobody.
    expect(await busySandboxContainers(h.sandboxInstance!)).toEqual([]);
  });
});
