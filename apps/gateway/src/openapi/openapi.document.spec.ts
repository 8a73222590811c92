import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OpenApiValidator, type OpenApiDoc } from '@drael/test-support';
import { HTTP_OPERATIONS } from './http-operations.js';
import { errorStatuses, openApiDocument } from './openapi.document.js';
import { referencePage } from './reference-page.js';

// Issue 22, item 3: the checked-in documents are what the code generates; CI fails while they are stale.
const docs = new URL('../../../../docs/', import.meta.url);
const REWRITE = 'rewrite: pnpm --filter @drael/gateway build && pnpm --filter @drael/gateway openapi';

describe('docs/openapi.json and docs/http-api.html', () => {
  it(`are what the gateway generates today (${REWRITE})`, () => {
    const doc = openApiDocument();
    expect(JSON.parse(readFileSync(new URL('openapi.json', docs), 'utf8'))).toEqual(doc);
    expect(readFileSync(new URL('http-api.html', docs), 'utf8')).toBe(referencePage(doc));
  });

  it('the reference page is static: no script, no remote resource', () => {
    const page = referencePage(openApiDocument());
    expect(page).not.toMatch(/<script|<link|<img|@import|src=/i);
    for (const op of HTTP_OPERATIONS) expect(page).toContain(`id="${op.operationId}"`);
  });
});

describe('openApiDocument', () => {
  const doc = openApiDocument() as unknown as OpenApiDoc;
  const validator = new OpenApiValidator(doc);

  it('is OpenAPI 3.1 whose every schema compiles as JSON Schema 2020-12, one operation per route', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(validator.compileAll()).toBeGreaterThan(HTTP_OPERATIONS.length);
    const ids = HTTP_OPERATIONS.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const routes = HTTP_OPERATIONS.map((op) => `${op.method} ${op.route}`);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('declares every status an error code maps to, in the envelope, on every keyed route', () => {
    const statuses = errorStatuses();
    expect(statuses).toEqual(expect.arrayContaining([400, 401, 403, 404, 409, 413, 429, 500, 502, 503, 504]));
    const op = doc.paths['/v1/agents']!.post!;
    for (const s of statuses) expect(op.responses[String(s)], String(s)).toBeDefined();
    expect(doc.paths['/healthz']!.get!.responses['401']).toBeUndefined();
  });

  it('its validator refuses what the document does not say (so the integration tests can fail)', () => {
    const list = JSON.stringify({ object: 'list', data: [{ id: 'gpt', object: 'model', created: 1, owned_by: 'drael' }] });
    expect(validator.check('GET', '/v1/models', 200, 'application/json', list)).toEqual([]);
    // A field the document does not have, a wrong type, an undeclared status, a body that is not the envelope.
    expect(validator.check('GET', '/v1/models', 200, 'application/json', JSON.stringify({ object: 'list', data: [], extra: 1 }))).toHaveLength(1);
    expect(validator.check('GET', '/v1/models', 200, 'application/json', JSON.stringify({ object: 'list', data: [{ id: 1 }] }))).toHaveLength(1);
    expect(validator.check('GET', '/v1/models', 201, 'application/json', list)).toHaveLength(1);
    expect(validator.check('GET', '/v1/models', 401, 'application/json', JSON.stringify({ message: 'no' }))).toHaveLength(1);
    expect(validator.check('GET', '/healthz', 401, 'application/json', JSON.stringify({ error: { message: 'm', type: 't', param: null, code: 'c' } }))).toHaveLength(1);
    expect(validator.check('POST', '/v1/agents', 200, 'application/json', '{}')).toHaveLength(1);
    expect(validator.check('GET', '/v1/models', 200, 'text/html', '<p>')).toHaveLength(1);
    // The envelope, on any declared error status; a model id with a slash reaches the wildcard route.
    const envelope = JSON.stringify({ error: { message: 'm', type: 'not_found_error', param: null, code: 'model_not_found' } });
    expect(validator.check('GET', '/v1/models/openai/gpt-5', 404, 'application/json; charset=utf-8', envelope)).toEqual([]);
    expect(validator.operationOf('GET', '/v1/models/openai/gpt-5')?.route).toBe('/v1/models/*');
    expect(validator.operationOf('GET', '/v1/sessions/s1/files')?.route).toBe('/v1/sessions/:id/files');
    expect(validator.operationOf('HEAD', '/readyz')?.route).toBe('/readyz');
    // The model upstream's own 4xx/5xx pass through the chat route in the envelope.
    expect(validator.check('POST', '/v1/chat/completions', 422, 'application/json', envelope)).toEqual([]);
  });
});
