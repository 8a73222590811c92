import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiCheckedCount, startGatewayProcess, takeOpenApiViolations, testPrefix, type GatewayProcess } from '@drael/test-support';
import { openApiDocument } from '../src/openapi/openapi.document.js';

/**
 * Issue 22, item 3: the HTTP surface described at GET /openapi.json (public) and GET /docs, and
 * the check of every test answer against it (openapi-check.setup.ts) actually running.
 */
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGatewayProcess(
    {
      NATS_URL,
      DRAEL_NATS_PREFIX: testPrefix('gw-openapi'),
      DRAEL_BACKEND_SERVICES: '',
      DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: 'http://127.0.0.1:9', model: 'm' } }),
    },
    { billing: false, readyTimeoutMs: 90_000 },
  );
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

describe('GET /openapi.json and GET /docs', () => {
  it('serve the generated document and its page without a key', async () => {
    const r = await fetch(`${gateway.url}/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await r.json()).toEqual(openApiDocument());
    const page = await fetch(`${gateway.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('id="createChatCompletion"');
  });

  it('every answer of the gateway is checked against it, errors included', async () => {
    const before = openApiCheckedCount();
    const r = await fetch(`${gateway.url}/v1/models`);
    expect(r.status).toBe(401);
    await fetch(`${gateway.url}/healthz`);
    expect(openApiCheckedCount()).toBe(before + 2);
    expect(takeOpenApiViolations()).toEqual([]);
  });
});
