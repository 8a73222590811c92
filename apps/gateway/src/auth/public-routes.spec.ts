import { describe, expect, it } from 'vitest';
import { needsApiKey } from './public-routes.js';

describe('needsApiKey', () => {
  it('guards every /v1 and /api route but the published plans', () => {
    expect(needsApiKey('POST', '/v1/chat/completions')).toBe(true);
    expect(needsApiKey('GET', '/v1/models')).toBe(true);
    expect(needsApiKey('GET', '/api/billing/usage')).toBe(true);
    expect(needsApiKey('GET', '/api/billing/plans')).toBe(false);
    expect(needsApiKey('GET', '/api/billing/plans?x=1')).toBe(false);
    expect(needsApiKey('POST', '/api/billing/plans')).toBe(true);
    expect(needsApiKey('GET', '/healthz')).toBe(false);
    expect(needsApiKey('GET', '/readyz')).toBe(false);
    expect(needsApiKey('GET', '/v1x')).toBe(false);
    expect(needsApiKey('GET', '/V1/models')).toBe(false); // Fastify routes are case-sensitive: no such route
  });

  it('leaves the console static files public (GET and HEAD)', () => {
    expect(needsApiKey('GET', '/console')).toBe(false);
    expect(needsApiKey('GET', '/console/')).toBe(false);
    expect(needsApiKey('GET', '/console/assets/index-abc.js')).toBe(false);
    expect(needsApiKey('HEAD', '/console/')).toBe(false);
    expect(needsApiKey('GET', '/v1/console')).toBe(true);
  });
});
