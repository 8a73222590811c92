import { z } from 'zod';
import { ERROR_CODES, OpenAIErrorEnvelopeSchema } from '@drael/contracts';
import { httpErrorOf } from '../errors/error-mapping.js';
import { HTTP_OPERATIONS, type Body, type HttpOperation } from './http-operations.js';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

// Statuses the edge answers before any route has a say (error-response.ts transportError, the
// router's 404): bad request, unknown route, stalled headers/body, too large, URI too long,
// unsupported encoding or type, headers too large.
const TRANSPORT_STATUSES = [400, 404, 408, 413, 414, 415, 431];
// Routes that call the model upstream pass its 4xx/5xx through with its own status (in the envelope).
const UPSTREAM_ROUTES = new Set(['/v1/chat/completions', '/v1/embeddings', '/v1/responses']);
// What a route answers when the path wildcard (`*`) holds: named by what it carries.
const WILDCARD_NAMES: Record<string, string> = { '/v1/models/*': 'model', '/console/*': 'file' };

const schemaOf = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
  return rest;
};

/** Every status an error of any code can be answered with: the one code table, plus the edge's own. */
export function errorStatuses(): number[] {
  const statuses = new Set<number>(TRANSPORT_STATUSES);
  for (const code of ERROR_CODES) statuses.add(httpErrorOf(code).status);
  return [...statuses].sort((a, b) => a - b);
}

/** `/v1/agents/:agent_id` → `/v1/agents/{agent_id}`; `/v1/models/*` → `/v1/models/{model}`. */
export function openApiPathOf(route: string): string {
  return route.replace(/:(\w+)/g, '{$1}').replace(/\*$/, `{${WILDCARD_NAMES[route] ?? 'path'}}`);
}

function parametersOf(op: HttpOperation): unknown[] {
  const path = [...openApiPathOf(op.route).matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
    ...(op.route.endsWith('*') && m.index + m[0].length === openApiPathOf(op.route).length
      ? { description: 'The rest of the path; it may hold `/` (percent-encode other reserved characters).', 'x-drael-wildcard': true }
      : {}),
  }));
  const query = op.query
    ? Object.entries((schemaOf(op.query, 'input').properties ?? {}) as Record<string, Record<string, unknown>>).map(([name, schema]) => ({
        name,
        in: 'query',
        required: !(op.query!.shape[name] as z.ZodType).safeParse(undefined).success,
        schema,
      }))
    : [];
  const headers = (op.headers ?? []).map((h) => ({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } }));
  return [...path, ...query, ...headers];
}

function responseOf(body: Body, op: HttpOperation): Record<string, unknown> {
  switch (body.kind) {
    case 'json': {
      const content: Record<string, unknown> = { 'application/json': { schema: schemaOf(body.schema, 'output') } };
      // A streamed answer shares the status: `stream: true` on the routes that take it.
      if (UPSTREAM_ROUTES.has(op.route))
        content['text/event-stream'] = {
          schema: { type: 'string', description: 'OpenAI-style server-sent events, ending with `data: [DONE]` (chat) or the terminal response event (Responses).' },
        };
      return { description: body.description, content };
    }
    case 'sse':
      return { description: body.description, content: { 'text/event-stream': { schema: { type: 'string' } } } };
    case 'bytes':
      return { description: body.description, content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } };
    case 'static':
      return { description: body.description, content: { '*/*': { schema: { type: 'string' } } } };
    case 'empty':
      return { description: body.description };
  }
}

function operationOf(op: HttpOperation, errors: number[]): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, body] of Object.entries(op.responses)) responses[status] = responseOf(body, op);
  const own = op.access === 'public' ? errors.filter((s) => s !== 401) : errors;
  for (const status of own) responses[String(status)] ??= { $ref: '#/components/responses/Error' };
  if (UPSTREAM_ROUTES.has(op.route)) {
    responses['4XX'] = { $ref: '#/components/responses/Error' };
    responses['5XX'] = { $ref: '#/components/responses/Error' };
  }
  let requestBody: unknown;
  if (op.body && 'schema' in op.body) requestBody = { required: true, content: { 'application/json': { schema: schemaOf(op.body.schema, 'input') } } };
  else if (op.body) requestBody = { required: false, content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } };
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.tag],
    security: op.access === 'public' ? [] : op.access === 'admin' ? [{ adminToken: [] }] : [{ apiKey: [] }],
    'x-drael-access': op.access,
    'x-drael-route': op.route,
    ...(parametersOf(op).length > 0 ? { parameters: parametersOf(op) } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the gateway's whole HTTP surface, built from the operations table
 * (http-operations.ts: each route's zod schemas, the same ones the routes validate with) and the
 * error-code table: nothing in it is written by hand. Served at GET /openapi.json, rendered at
 * GET /docs, checked in as docs/openapi.json (a test fails while that file is stale:
 * `pnpm --filter @drael/gateway build && pnpm --filter @drael/gateway openapi` rewrites it).
 */
export function openApiDocument(version = '0.1.0'): OpenApiDocument {
  const errors = errorStatuses();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of HTTP_OPERATIONS) {
    const item = (paths[openApiPathOf(op.route)] ??= {});
    item[op.method.toLowerCase()] = operationOf(op, errors);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Drael gateway',
      version,
      description: [
        'The OpenAI-compatible gateway with server-side tools, hosted agents and billing. Point an OpenAI SDK at `/v1`.',
        'Every error, whatever its status, is the OpenAI envelope `{"error": {"message", "type", "param", "code"}}`.',
        'A route that is not public needs `Authorization: Bearer drael_...` (or `x-api-key`), checked before the body is read; `/admin` routes need the admin token.',
        'Every GET also answers HEAD. Keyed routes return the `x-ratelimit-*` headers; every answer carries `x-request-id`.',
        'The NATS subjects behind it are described in docs/asyncapi.yaml and docs/calling-services.md.',
      ].join('\n\n'),
    },
    servers: [{ url: '/', description: 'The gateway itself.' }],
    tags: [...new Set(HTTP_OPERATIONS.map((op) => op.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (`drael_...`) made by the operator (`POST /admin/accounts/{account}/keys`).' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The operator’s `DRAEL_ADMIN_TOKEN`.' },
      },
      responses: {
        Error: {
          description: 'The OpenAI error envelope (the code names the cause; see the README’s error table).',
          content: { 'application/json': { schema: schemaOf(OpenAIErrorEnvelopeSchema, 'output') } },
        },
      },
    },
  };
}
