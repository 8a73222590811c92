import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';
import { httpErrorOf } from './error-mapping.js';
import { ApiError } from './api-error.js';

describe('error mapping', () => {
  it('maps every code of every service to an HTTP error status and an OpenAI type', () => {
    for (const code of ERROR_CODES) {
      const { status, type } = httpErrorOf(code);
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
      expect(type, code).toMatch(/_error$|^insufficient_quota$/);
    }
  });

  it('gives the statuses the issue names', () => {
    expect(httpErrorOf('invalid_json').status).toBe(400);
    expect(httpErrorOf('model_not_found')).toEqual({ status: 404, type: 'not_found_error' });
    expect(httpErrorOf('upstream_unreachable').status).toBe(502);
    expect(httpErrorOf('upstream_timeout').status).toBe(504);
  });

  it('throws, rather than guessing, for a code no enum declares', () => {
    expect(() => httpErrorOf('no_such_code' as never)).toThrow(/no HTTP mapping/);
  });

  it('turns a typed NATS error into the envelope, keeping its param', () => {
    const err = ApiError.fromRpc(new RpcError('code_too_large', 'too big', false, { param: 'code' }));
    expect(err?.status).toBe(413);
    expect(err?.toEnvelope()).toEqual({ error: { message: 'too big', type: 'invalid_request_error', param: 'code', code: 'code_too_large' } });
  });

  it('answers a browser pool at its share or bounds (fetch_busy) as sandbox_busy: 503 with Retry-After', () => {
    expect(httpErrorOf('fetch_busy')).toEqual(httpErrorOf('sandbox_busy'));
    const err = ApiError.fromRpc(new RpcError('fetch_busy', "this tenant's share of the browser is taken", true, { share: 'tenant' }));
    expect(err?.status).toBe(503);
    expect(err?.headers?.['retry-after']).toMatch(/^\d+$/);
  });

  it('answers 500 for a code from a newer service instead of crashing', () => {
    expect(ApiError.fromRpc(new RpcError('brand_new_code', 'x'))?.status).toBe(500);
  });
});

describe('codes of hosted agents, idempotency and size', () => {
  it('maps them to the statuses the README names', () => {
    expect(httpErrorOf('tool_not_allowed')).toEqual({ status: 403, type: 'permission_error' });
    expect(httpErrorOf('idempotency_key_reused')).toEqual({ status: 409, type: 'invalid_request_error' });
    expect(httpErrorOf('run_already_finished').status).toBe(409);
    expect(httpErrorOf('payload_too_large')).toEqual({ status: 413, type: 'invalid_request_error' });
    expect(httpErrorOf('too_many_queued_runs')).toEqual({ status: 429, type: 'rate_limit_error' });
    expect(httpErrorOf('too_many_event_streams')).toEqual({ status: 429, type: 'rate_limit_error' });
  });
});
