import { describe, expect, it } from 'vitest';
import { agentRunCatalog, billingCatalog, canonicalJson, idempotencyRequest, isStorableText, MAX_TASK_CHARS, taskProblem } from '../src/index.js';

describe('text PostgreSQL can store', () => {
  it('refuses NUL and unpaired surrogates, keeps paired ones (emoji)', () => {
    expect(isStorableText('plain')).toBe(true);
    expect(isStorableText('emoji 😀')).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\ud800')).toBe(false);
    expect(isStorableText('x\udc00y')).toBe(false);
    expect(isStorableText('\udc00\ud800')).toBe(false);
  });

  it('every id and name of agent-run and billing requests refuses them, naming the field', () => {
    const bad = agentRunCatalog.getAgent.request.safeParse({ account_id: 'a', agent_id: 'agent_\u0000' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['agent_id']);
    expect(agentRunCatalog.listRuns.request.safeParse({ account_id: 'a', before: '\u0000' }).success).toBe(false);
    expect(agentRunCatalog.createAgent.request.safeParse({ account_id: 'a', tool_level: 'none', agent: { model: 'm', name: '\ud800' } }).success).toBe(false);
    expect(billingCatalog.createAccount.request.safeParse({ name: 'n\u0000' }).success).toBe(false);
  });
});

describe('numbers within their columns', () => {
  it('key limits and the daily ceiling', () => {
    for (const n of [2 ** 31, 1e12]) {
      expect(billingCatalog.createKey.request.safeParse({ account_id: 'a', rate_limit: { per_minute: n, per_hour: 10 } }).success).toBe(false);
      expect(billingCatalog.createAccount.request.safeParse({ name: 'x', extra_usage: { enabled: true, daily_ceiling: n } }).success).toBe(false);
    }
  });
});

describe('tasks and idempotency', () => {
  it('a task is 1–50,000 code points, and a megabyte is refused without counting it', () => {
    expect(taskProblem('')).toMatch(/1–50,000/);
    expect(taskProblem('😀'.repeat(MAX_TASK_CHARS))).toBeNull();
    expect(taskProblem('x'.repeat(MAX_TASK_CHARS + 1))).toMatch(/got 50001/);
    expect(taskProblem('x'.repeat(1 << 20))).toMatch(/50,000/);
  });

  it('the idempotency fingerprint ignores key order, not values or targets', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    expect(idempotencyRequest('post', '/t', { a: 1, b: 2 })).toBe(idempotencyRequest('POST', '/t', { b: 2, a: 1 }));
    expect(idempotencyRequest('POST', '/t', { a: 1 })).not.toBe(idempotencyRequest('POST', '/u', { a: 1 }));
    expect(idempotencyRequest('POST', '/t', { a: 1 })).not.toBe(idempotencyRequest('POST', '/t', { a: 2 }));
  });
});
