import { describe, expect, it } from 'vitest';
import { chargeModelCall, chargeSandbox, inputTokenBound, MIN_AFFORDABLE_OUTPUT_TOKENS, reserveModelCall, reserveSandbox, type ModelPrice } from './budget.js';

// $1 / $4 per million tokens, in micro-dollars.
const price: ModelPrice = { inputPerMTok: 1_000_000, outputPerMTok: 4_000_000 };

describe('budget reservations (spec 03)', () => {
  it('caps max_tokens at what the remainder pays for after the input', () => {
    // 1,000 input tokens cost 1,000 µ$; 3,000 µ$ left buy 750 output tokens at 4 µ$ each.
    expect(reserveModelCall(4_000, 1_000, price, 4096)).toEqual({ maxTokens: 750, ceilingMicros: 4_000 });
  });

  it('never offers more than the model maximum', () => {
    expect(reserveModelCall(1_000_000, 10, price, 4096)?.maxTokens).toBe(4096);
  });

  it('refuses when fewer than 64 tokens are affordable, and allows exactly 64', () => {
    const input = 1_000;
    const exactly64 = 1_000 + 64 * 4;
    expect(reserveModelCall(exactly64, input, price, 4096)?.maxTokens).toBe(MIN_AFFORDABLE_OUTPUT_TOKENS);
    expect(reserveModelCall(exactly64 - 1, input, price, 4096)).toBeNull();
    expect(reserveModelCall(500, input, price, 4096)).toBeNull();
  });

  it('charges actual usage, never above the reservation', () => {
    const r = reserveModelCall(4_000, 1_000, price, 4096)!;
    expect(chargeModelCall({ prompt_tokens: 200, completion_tokens: 100 }, price, r)).toBe(200 + 400);
    // An upstream that reports more than the bound still cannot push spend past the ceiling.
    expect(chargeModelCall({ prompt_tokens: 50_000, completion_tokens: 5_000 }, price, r)).toBe(r.ceilingMicros);
  });

  it('bounds input tokens by bytes plus a per-message allowance', () => {
    expect(inputTokenBound('héllo', 1)).toBe(6 + 16 + 64);
  });

  it('reserves a sandbox execution at its full timeout, refusing past the remainder', () => {
    expect(reserveSandbox(3_000, 30, 100)).toBe(3_000);
    expect(reserveSandbox(2_999, 30, 100)).toBeNull();
    expect(chargeSandbox(1.2, 100, 3_000)).toBe(200);
    expect(chargeSandbox(45, 100, 3_000)).toBe(3_000);
  });

  it('keeps spend within the budget over a seeded random sequence of operations', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 200; trial++) {
      const budget = Math.floor(rand() * 50_000) + 1;
      let spent = 0;
      for (let op = 0; op < 100; op++) {
        const remaining = budget - spent;
        if (rand() < 0.6) {
          const r = reserveModelCall(remaining, Math.floor(rand() * 5_000), price, 4096);
          if (!r) break;
          spent += chargeModelCall({ prompt_tokens: Math.floor(rand() * 20_000), completion_tokens: Math.floor(rand() * 10_000) }, price, r);
        } else {
          const r = reserveSandbox(remaining, 30, 50);
          if (r === null) break;
          spent += chargeSandbox(rand() * 60, 50, r);
        }
        expect(spent).toBeLessThanOrEqual(budget);
      }
    }
  });
});
