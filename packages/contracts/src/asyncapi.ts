import { CATALOGS } from './catalogs.js';
import { entrySchemas } from './json-schema.js';
import type { RpcEntry } from './rpc-entry.js';

const SCHEMA_FORMAT = 'application/schema+json;version=draft-07';

const HEADERS = {
  type: 'object',
  properties: {
    'x-request-id': { type: 'string', description: 'Carried into every log line of the request; one is made when absent.' },
    traceparent: {
      type: 'string',
      description:
        'W3C trace context. When the installation traces, the service span of the request is a child of this span (in the caller trace); without it the service starts a new trace.',
    },
  },
};

/** `billing.plans.list.v1` → `billing_plans_list_v1`: an id AsyncAPI accepts as a key. */
const idOf = (entry: RpcEntry) => entry.subject.replace(/[^\w]/g, '_');

/**
 * The AsyncAPI 3 document of every NATS subject (docs/asyncapi.yaml), built from the catalogs and
 * the JSON Schemas generated from their zod schemas: nothing in it is written by hand, and a
 * contracts test fails when the checked-in file differs (`pnpm --filter @drael/contracts asyncapi`
 * rewrites it).
 */
export function asyncApiDocument(version = '0.1.0'): Record<string, unknown> {
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  for (const [service, catalog] of Object.entries(CATALOGS)) {
    for (const entry of Object.values(catalog)) {
      const id = idOf(entry);
      const schemas = entrySchemas(entry);
      messages[`${id}_request`] = {
        name: `${id}_request`,
        title: `${entry.subject} request`,
        contentType: 'application/json',
        headers: HEADERS,
        payload: { schemaFormat: SCHEMA_FORMAT, schema: schemas.request },
      };
      messages[`${id}_reply`] = {
        name: `${id}_reply`,
        title: `${entry.subject} reply envelope`,
        contentType: 'application/json',
        payload: { schemaFormat: SCHEMA_FORMAT, schema: schemas.reply },
      };
      channels[id] = {
        address: entry.subject,
        messages: { request: { $ref: `#/components/messages/${id}_request` } },
      };
      channels[`${id}_reply`] = {
        address: null,
        description: "The request's NATS reply subject (an _INBOX subject of the caller).",
        messages: { reply: { $ref: `#/components/messages/${id}_reply` } },
      };
      operations[id] = {
        action: 'receive',
        title: entry.subject,
        summary: `${service}: request/reply${entry.delivery === 'every-replica' ? ' delivered to every replica (outside the queue group; only one that acts answers)' : ''}, default timeout ${entry.timeoutMs} ms; error codes: ${entry.errors.join(', ')}`,
        channel: { $ref: `#/channels/${id}` },
        messages: [{ $ref: `#/channels/${id}/messages/request` }],
        reply: {
          channel: { $ref: `#/channels/${id}_reply` },
          messages: [{ $ref: `#/channels/${id}_reply/messages/reply` }],
        },
        tags: [{ name: service }],
      };
    }
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Drael services over NATS',
      version,
      description: [
        'Every subject is a request/reply (none is fire-and-forget): a message without a reply subject is refused and not executed.',
        'Send the request itself as JSON; the reply is the envelope {"result": ...} or {"error": {"code", "message", "retryable", "details"?}}.',
        "Nest's packet ({pattern, id, data} in, {response, isDisposed, id} out) is accepted too (the typed Node client uses it).",
        'A body that is not JSON is answered bad_request at once. With DRAEL_NATS_PREFIX set, every subject is `<prefix>.<subject>`.',
        'Each service also answers the NATS services protocol ($SRV.PING, $SRV.INFO, $SRV.STATS). See docs/calling-services.md.',
      ].join('\n'),
    },
    defaultContentType: 'application/json',
    servers: { local: { host: '127.0.0.1:4222', protocol: 'nats', description: 'The bring-up NATS (infra/up.sh).' } },
    channels,
    operations,
    components: { messages },
  };
}
