import { describe, expect, it } from 'vitest';
import { modelsEnvSchema } from './model-routes.config.js';

const parse = (value: unknown) => modelsEnvSchema.safeParse(JSON.stringify(value));

describe('DRAEL_MODELS', () => {
  it('the single-upstream form is one deployment named after its alias, as before', () => {
    const r = parse({ local: { base_url: 'http://127.0.0.1:11434/v1/', api_key: 'k', model: 'llama', input_per_1m: 1, output_per_1m: 2 } });
    expect(r.success).toBe(true);
    expect(r.data!.local).toEqual({
      alias: 'local',
      strategy: 'weighted',
      deployments: [
        { name: 'local', alias: 'local', base_url: 'http://127.0.0.1:11434/v1', api_key: 'k', model: 'llama', weight: 1, priority: 0, input_per_1m: 1, output_per_1m: 2 },
      ],
    });
  });

  it('the single-upstream form takes the timeouts too (they were dropped without a word)', () => {
    const r = parse({ local: { base_url: 'http://h/v1', model: 'm', headers_timeout_ms: 5_000, body_timeout_ms: 9_000 } });
    expect(r.data!.local!.deployments[0]).toMatchObject({ headers_timeout_ms: 5_000, body_timeout_ms: 9_000 });
  });

  it('an alias that cannot be a header value still gets a safe deployment name', () => {
    const r = parse({ 'org/model': { base_url: 'http://h/v1', model: 'm' } });
    expect(r.data!['org/model']!.deployments[0]!.name).toBe('org-model-0');
  });

  it("a list of deployments: defaults, own prices over the alias's, limits and timeouts kept", () => {
    const r = parse({
      chat: {
        strategy: 'least_busy',
        context_fallback: 'long',
        input_per_1m: 1,
        output_per_1m: 1,
        deployments: [
          { name: 'a', base_url: 'http://a/v1', model: 'm', weight: 3, rpm: 10, tpm: 1000, headers_timeout_ms: 500 },
          { base_url: 'http://b/v1', model: 'm2', priority: 1, input_per_1m: 5 },
        ],
      },
      long: { base_url: 'http://c/v1', model: 'big' },
    });
    expect(r.success).toBe(true);
    const chat = r.data!.chat!;
    expect(chat.strategy).toBe('least_busy');
    expect(chat.context_fallback).toBe('long');
    expect(chat.deployments[0]).toMatchObject({ name: 'a', weight: 3, priority: 0, rpm: 10, tpm: 1000, headers_timeout_ms: 500, input_per_1m: 1, output_per_1m: 1 });
    expect(chat.deployments[1]).toMatchObject({ name: 'chat-1', weight: 1, priority: 1, input_per_1m: 5, output_per_1m: 1 });
  });

  it('refuses what cannot be routed: duplicate names, an unknown fallback, an empty list, unknown fields, bad weights', () => {
    expect(
      parse({ a: { deployments: [{ name: 'x', base_url: 'http://a/v1', model: 'm' }] }, b: { deployments: [{ name: 'x', base_url: 'http://b/v1', model: 'm' }] } }).success,
    ).toBe(false);
    expect(parse({ a: { context_fallback: 'nope', deployments: [{ base_url: 'http://a/v1', model: 'm' }] } }).success).toBe(false);
    expect(parse({ a: { deployments: [] } }).success).toBe(false);
    expect(parse({ a: { deployments: [{ base_url: 'http://a/v1', model: 'm', wieght: 2 }] } }).success).toBe(false);
    expect(parse({ a: { deployments: [{ base_url: 'http://a/v1', model: 'm', weight: 0 }] } }).success).toBe(false);
    expect(parse({ a: { deployments: [{ name: 'has space', base_url: 'http://a/v1', model: 'm' }] } }).success).toBe(false);
  });
});
