import { describe, expect, it } from 'vitest';
import { runHealthChecks } from './health-checks.js';

describe('runHealthChecks', () => {
  it('names each failing dependency with why; only critical ones fail health', async () => {
    const r = await runHealthChecks([
      { name: 'postgres', check: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) },
      { name: 'redis', critical: false, check: () => Promise.reject(new Error('redis connection reconnecting')) },
      { name: 'docker', check: () => Promise.resolve() },
    ]);
    expect(r).toEqual({
      ok: false,
      failing: ['postgres'],
      checks: { postgres: 'connect ECONNREFUSED 127.0.0.1:5432', redis: 'redis connection reconnecting', docker: 'ok' },
    });
  });

  it('a dependency that does not answer in time is failed, not waited for', async () => {
    const r = await runHealthChecks([{ name: 'searxng', check: () => new Promise<void>(() => undefined) }], 50);
    expect(r.ok).toBe(false);
    expect(r.checks.searxng).toBe('no answer within 50 ms');
  });

  it('a non-critical failure alone leaves health ok; an error code with an empty message is still named', async () => {
    const r = await runHealthChecks([{ name: 'chromium', critical: false, check: () => Promise.reject(Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' })) }]);
    expect(r).toMatchObject({ ok: true, failing: [] });
    expect(r.checks.chromium).toMatch(/ECONNREFUSED/);
  });
});
