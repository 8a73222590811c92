import { errors as undiciErrors } from 'undici';
import { describe, expect, it } from 'vitest';
import { UPSTREAM_FAILURE_CODES } from '@drael/contracts';
import { answerFailure, isRetryable, parseRetryAfter, statusFailure, unacceptedAnswer, upstreamFailure, upstreamFailureCode } from './upstream-failure.js';

const NOW = Date.parse('2026-12-01T06:00:00Z');
const envelope = (message: string, code: string | null, type = 'invalid_request_error') => JSON.stringify({ error: { message, type, param: null, code } });

describe('statusFailure', () => {
  it("a 429 is upstream_rate_limited, retryable, with its Retry-After kept and read, in Drael's words", () => {
    const f = statusFailure(429, { 'retry-after': '30' }, envelope('slow down, org-SECRET123', 'rate_limit_exceeded'), NOW, 'gpt-a');
    expect(f.kind).toBe('rate_limited');
    expect(isRetryable(f.kind)).toBe(true);
    expect(f.retryAfterMs).toBe(30_000);
    expect(f.error.status).toBe(429);
    expect(f.error.toEnvelope().error).toMatchObject({ code: 'upstream_rate_limited', type: 'rate_limit_error' });
    expect(f.error.message).not.toContain('SECRET');
    expect(f.error.message).toContain('gpt-a');
    expect(f.error.headers).toEqual({ 'retry-after': '30' });
    // The operator's log has what the upstream said.
    expect(f.detail).toBe('slow down, org-SECRET123');
  });

  it('a 429 without Retry-After has no header to pass on', () => {
    const f = statusFailure(429, {}, 'busy', NOW);
    expect(f.retryAfterMs).toBeUndefined();
    expect(f.error.headers).toBeUndefined();
  });

  it("a 5xx is retryable, answered 502 (503 stays 503, 504 is a timeout), never the caller's invalid request, never in the upstream's words", () => {
    const f = statusFailure(500, {}, envelope('Traceback: /srv/model/secret_path.py line 42', null), NOW, 'gpt-a');
    expect(f.kind).toBe('server_error');
    expect(isRetryable(f.kind)).toBe(true);
    expect(f.error.status).toBe(502);
    expect(f.error.toEnvelope().error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
    expect(f.error.message).not.toContain('secret_path');
    expect(f.detail).toContain('secret_path');
    const html = statusFailure(503, {}, '<html>nginx internal-host-10.0.0.5</html>', NOW);
    expect(html.error.status).toBe(503);
    expect(html.error.message).not.toContain('internal-host');
    const late = statusFailure(504, {}, 'gateway timeout', NOW);
    expect(late.kind).toBe('timeout');
    expect(late.error).toMatchObject({ code: 'upstream_timeout', status: 504 });
  });

  it("a refused credential or an unknown model is the deployment's fault: 502, retried elsewhere, and nothing of the answer repeated", () => {
    for (const status of [401, 403, 407, 404]) {
      const f = statusFailure(status, {}, envelope('Incorrect API key provided: sk-UPSTREAM-SECRET', 'invalid_api_key', 'authentication_error'), NOW, 'gpt-a');
      expect(f.kind).toBe('server_error');
      expect(isRetryable(f.kind)).toBe(true);
      expect(f.error.status).toBe(502);
      expect(f.error.toEnvelope().error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
      expect(JSON.stringify(f.error.toEnvelope())).not.toContain('SECRET');
      // Not even to the log, where the upstream echoed the deployment's key.
      if (status !== 404) expect(f.detail).toBeUndefined();
    }
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
    // What the upstream says of the request itself passes through on HTTP; over NATS (agent-run) its code is upstream_error.
    const own = [
      statusFailure(400, {}, envelope('too long', 'context_length_exceeded'), NOW).error,
      statusFailure(400, {}, envelope('bad temperature', 'invalid_request'), NOW).error,
      statusFailure(422, {}, envelope('no such key', 'invalid_api_key'), NOW).error,
    ];
    expect(own.map((e) => e.code)).toEqual(['context_length_exceeded', 'invalid_request', 'invalid_api_key']);
    expect(own.map((e) => upstreamFailureCode(e))).toEqual(['upstream_error', 'upstream_error', 'upstream_error']);
    for (const e of own) expect(UPSTREAM_FAILURE_CODES).toContain(upstreamFailureCode(e));
  });
});

describe('unacceptedAnswer: a head below 400 that is no model answer', () => {
  it('refuses a redirect, an unasked content coding and an HTML page, and takes JSON and SSE', () => {
    const refused = [
      unacceptedAnswer(307, { location: 'http://169.254.169.254/' }, 'gpt-a'),
      unacceptedAnswer(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' }),
      unacceptedAnswer(200, { 'content-type': 'text/html; charset=utf-8' }),
    ];
    for (const f of refused) {
      expect(f?.kind).toBe('server_error');
      expect(f?.error).toMatchObject({ code: 'upstream_error', status: 502 });
    }
    expect(refused[0]!.error.message).not.toContain('169.254');
    expect(unacceptedAnswer(200, { 'content-type': 'application/json' })).toBeUndefined();
    expect(unacceptedAnswer(200, { 'content-type': 'text/event-stream', 'content-encoding': 'identity' })).toBeUndefined();
    expect(unacceptedAnswer(200, {})).toBeUndefined();
  });
});
