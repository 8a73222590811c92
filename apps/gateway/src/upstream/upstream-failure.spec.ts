import { errors as undiciErrors } from 'undici';
import { describe, expect, it } from 'vitest';
import { UPSTREAM_FAILURE_CODES } from '@drael/contracts';
import { answerFailure, isRetryable, parseRetryAfter, statusFailure, upstreamFailure, upstreamFailureCode } from './upstream-failure.js';

const NOW = Date.parse('2026-12-01T06:00:00Z');
const envelope = (message: string, code: string | null, type = 'invalid_request_error') => JSON.stringify({ error: { message, type, param: null, code } });

describe('statusFailure', () => {
  it('a 429 is upstream_rate_limited, retryable, with its Retry-After kept and read', () => {
    const f = statusFailure(429, { 'retry-after': '30' }, envelope('slow down', 'rate_limit_exceeded'), NOW);
    expect(f.kind).toBe('rate_limited');
    expect(isRetryable(f.kind)).toBe(true);
    expect(f.retryAfterMs).toBe(30_000);
    expect(f.error.status).toBe(429);
    expect(f.error.toEnvelope().error).toMatchObject({ code: 'upstream_rate_limited', type: 'rate_limit_error', message: 'slow down' });
    expect(f.error.headers).toEqual({ 'retry-after': '30' });
  });

  it('a 429 without Retry-After has no header to pass on', () => {
    const f = statusFailure(429, {}, 'busy', NOW);
    expect(f.retryAfterMs).toBeUndefined();
    expect(f.error.headers).toBeUndefined();
  });

  it("a 5xx is retryable; its type is never the caller's invalid request", () => {
    const f = statusFailure(503, {}, envelope('overloaded', null), NOW);
    expect(f.kind).toBe('server_error');
    expect(isRetryable(f.kind)).toBe(true);
    expect(f.error.toEnvelope().error).toMatchObject({ code: 'upstream_error', type: 'api_error', message: 'overloaded' });
  });

  it("a 400 is the request's fault and not retried; its envelope passes through", () => {
    const f = statusFailure(400, {}, envelope('bad temperature', 'invalid_value'), NOW);
    expect(f.kind).toBe('client_error');
    expect(isRetryable(f.kind)).toBe(false);
    expect(f.error.toEnvelope().error).toMatchObject({ code: 'invalid_value', type: 'invalid_request_error' });
  });

  it('context_length_exceeded is recognised by code or by the usual message', () => {
    expect(statusFailure(400, {}, envelope('too long', 'context_length_exceeded'), NOW).kind).toBe('context_length');
    expect(statusFailure(400, {}, envelope("This model's maximum context length is 8192 tokens", null), NOW).kind).toBe('context_length');
    expect(isRetryable('context_length')).toBe(false);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 2.5 ', NOW)).toBe(2500);
    expect(parseRetryAfter('Tue, 01 Dec 2026 06:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 05:00:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });
});

describe('upstreamFailureCode: every upstream failure onto the fixed set UPSTREAM_FAILURE_CODES', () => {
  it('keeps the code of each failure this module builds', () => {
    const built = [
      statusFailure(429, {}, envelope('slow down', 'rate_limit_exceeded'), NOW).error,
      statusFailure(503, {}, 'overloaded', NOW).error,
      statusFailure(500, {}, envelope('boom', null), NOW).error,
      upstreamFailure(new undiciErrors.HeadersTimeoutError())!,
      upstreamFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }))!,
      answerFailure(new Error('the socket closed')),
    ];
    expect(built.map((e) => upstreamFailureCode(e))).toEqual([
      'upstream_rate_limited',
      'upstream_error',
      'upstream_error',
      'upstream_timeout',
      'upstream_unreachable',
      'upstream_error',
    ]);
    expect(built.map((e) => upstreamFailureCode(e))).toEqual(built.map((e) => e.code));
  });

  it("answers an upstream's own code as upstream_error, even one that is also a Drael code", () => {
    // A deployment's wrong key is not the caller's: invalid_api_key must not reach agent-run as its own.
    const own = [
      statusFailure(401, {}, envelope('Incorrect API key provided', 'invalid_api_key', 'authentication_error'), NOW).error,
      statusFailure(400, {}, envelope('too long', 'context_length_exceeded'), NOW).error,
      statusFailure(400, {}, envelope('bad temperature', 'invalid_request'), NOW).error,
      statusFailure(404, {}, envelope('no such model', 'model_not_found'), NOW).error,
    ];
    expect(own.map((e) => e.code)).toEqual(['invalid_api_key', 'context_length_exceeded', 'invalid_request', 'model_not_found']);
    expect(own.map((e) => upstreamFailureCode(e))).toEqual(['upstream_error', 'upstream_error', 'upstream_error', 'upstream_error']);
    for (const e of own) expect(UPSTREAM_FAILURE_CODES).toContain(upstreamFailureCode(e));
  });
});
