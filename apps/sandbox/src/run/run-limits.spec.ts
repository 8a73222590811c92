import { describe, expect, it } from 'vitest';
import { MAX_CODE_BYTES, RUN_TIMEOUT_SLACK_S, sandboxCatalog } from '@drael/contracts';
import { assertCodeSize, resolveTimeoutS, runWaitMs, startDeadlineOf } from './run-limits.js';

describe('run limits', () => {
  it('accepts 256 KiB of source and refuses one byte more, counted in UTF-8', () => {
    expect(() => assertCodeSize('x'.repeat(MAX_CODE_BYTES))).not.toThrow();
    expect(() => assertCodeSize('x'.repeat(MAX_CODE_BYTES + 1))).toThrow(expect.objectContaining({ code: 'code_too_large' }));
    // 2-byte characters: half as many fit.
    expect(() => assertCodeSize('é'.repeat(MAX_CODE_BYTES / 2 + 1))).toThrow(expect.objectContaining({ code: 'code_too_large' }));
  });

  it('defaults the timeout to 30 s, allows up to 300 s, refuses 0, negatives, NaN, infinity and more than 300', () => {
    expect(resolveTimeoutS(undefined)).toBe(30);
    expect(resolveTimeoutS(0.5)).toBe(0.5);
    expect(resolveTimeoutS(300)).toBe(300);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 300.001]) {
      expect(() => resolveTimeoutS(bad)).toThrow(expect.objectContaining({ code: 'invalid_timeout' }));
    }
  });

  it("a queued run may start only while its caller still waits for the whole of it: the catalog's wait minus the run's own limit", () => {
    const at = 1_000_000;
    for (const timeout_s of [undefined, 0.5, 1, 30, 300]) {
      const req = { tenant: 't', runtime: 'bash' as const, code: 'true', timeout_s };
      expect(runWaitMs(req)).toBe(sandboxCatalog.run.timeoutFor?.(req));
      expect(startDeadlineOf(req, at) + resolveTimeoutS(timeout_s) * 1000).toBe(at + runWaitMs(req));
    }
    // As the catalog stands: 30 s of waiting at most, whatever the run's limit.
    expect(startDeadlineOf({ tenant: 't', runtime: 'bash', code: 'true', timeout_s: 300 }, at)).toBe(at + RUN_TIMEOUT_SLACK_S * 1000);
  });
});
