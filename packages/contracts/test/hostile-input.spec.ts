import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentRunCatalog,
  billingCatalog,
  canonicalJson,
  idempotencyRequest,
  isStorableText,
  MAX_TASK_CHARS,
  patternRefinement,
  refinementPattern,
  STORABLE_TEXT,
  taskProblem,
} from '../src/index.js';

describe('text PostgreSQL can store', () => {
  it('refuses NUL and unpaired surrogates, keeps paired ones (emoji)', () => {
    expect(isStorableText('plain')).toBe(true);
    expect(isStorableText('emoji 😀')).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\ud800')).toBe(false);
    expect(isStorableText('x\udc00y')).toBe(false);
    expect(isStorableText('\udc00\ud800')).toBe(false);
  });

  it('the pattern says what a walk over the UTF-16 code units says, for any string', () => {
    // The rule written the long way: NUL, or a surrogate not in a high-low pair, is unstorable.
    const walk = (s: string): boolean => {
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c === 0 || (c >= 0xdc00 && c <= 0xdfff)) return false;
        if (c >= 0xd800 && c <= 0xdbff) {
          const next = s.charCodeAt(i + 1);
          if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
          i++;
        }
      }
      return true;
    };
    const units = ['a', '\0', '\n', '\ud800', '\udbff', '\udc00', '\udfff', '😀', 'é', '\uffff', '\ud7ff', '\ue000', '\u0001'];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      let s = '';
      for (let j = random(9); j > 0; j--) s += units[random(units.length)];
      expect(isStorableText(s), JSON.stringify(s)).toBe(walk(s));
      if (!walk(s)) refused++;
    }
    expect(refused).toBeGreaterThan(5_000);
    // Long text is linear: no backtracking blow-up on a long run of pairs or a late NUL.
    expect(isStorableText('😀'.repeat(1_000_000))).toBe(true);
    expect(isStorableText(`${'x'.repeat(1_000_000)}\0`)).toBe(false);
  });

  it('is a pattern refinement: known as its pattern, kept out of the published JSON Schema', () => {
    expect(refinementPattern(isStorableText)).toBe(STORABLE_TEXT);
    expect(refinementPattern((s: string) => STORABLE_TEXT.test(s))).toBeUndefined();
    expect(() => patternRefinement(/x/u)).toThrow(/without flags/);
    // Surrogate escapes: Rust's and Go's regex engines refuse them, which would break a generated client.
    const schema = z.toJSONSchema(billingCatalog.createAccount.request, { target: 'draft-7', io: 'input' });
    expect(schema.properties?.name).toMatchObject({ type: 'string' });
    expect(schema.properties?.name).not.toHaveProperty('pattern');
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
  it('a settle, a receipt link and an event cursor: int4 columns get no larger number (they answered internal)', () => {
    const fingerprint = 'a'.repeat(64);
    const receipt = {
      usage: { model: 'm', prompt_tokens: 3 },
      input_fingerprint: fingerprint,
      output_fingerprint: fingerprint,
      run: { id: 'run_1', sequence: 0, previous_receipt_hash: null },
    };
    const spend = { account_id: 'a', hold_id: 'h', kind: 'inference.chat' as const, amount_micros: 1, receipt };
    expect(billingCatalog.settleSpend.request.safeParse(spend).success).toBe(true);
    expect(billingCatalog.settleSpend.request.safeParse({ ...spend, receipt: { ...receipt, run: { ...receipt.run, sequence: 2 ** 31 } } }).success).toBe(false);
    expect(billingCatalog.settle.request.safeParse({ account_id: 'a', hold_id: 'h', units: 2 ** 31 }).success).toBe(false);
    expect(billingCatalog.settle.request.safeParse({ account_id: 'a', hold_id: 'h', contacts: { plain: 2 ** 31, premium: 0 } }).success).toBe(false);
    expect(agentRunCatalog.runEvents.request.safeParse({ account_id: 'a', run_id: 'run_1', after: 2 ** 31 }).success).toBe(false);
  });

  it("a receipt's usage is a few figures: bounded in entries and text, storable (a megabyte of it made a settle whose answer could not be sent)", () => {
    const fingerprint = 'a'.repeat(64);
    const settle = (usage: Record<string, unknown>) =>
      billingCatalog.settleSpend.request.safeParse({
        account_id: 'a',
        hold_id: 'h',
        kind: 'inference.chat',
        amount_micros: 1,
        receipt: { usage, input_fingerprint: fingerprint, output_fingerprint: fingerprint, run: { id: 'run_1', sequence: 0, previous_receipt_hash: null } },
      }).success;
    expect(settle({ model: 'x'.repeat(1024), exit_code: null })).toBe(true);
    expect(settle({ model: 'x'.repeat(1_000_000) })).toBe(false);
    expect(settle({ model: 'a\u0000b' })).toBe(false);
    expect(settle({ ['\ud800']: 1 })).toBe(false);
    expect(settle(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])))).toBe(false);
  });

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
