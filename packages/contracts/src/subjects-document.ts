import { CATALOGS } from './catalogs.js';
import { entrySchemas, type JsonSchema } from './json-schema.js';
import { catalogEntries, type RpcEntry } from './rpc-entry.js';
import { SANDBOX_ROUTED_ENTRIES, sandboxCatalog } from './sandbox.js';
import { gatewayCatalog } from './gateway.js';
import { COMMON_ERROR_CODES } from './wire-error.js';

/**
 * docs/subjects.md and docs/schemas/: every subject of every catalog with its kind, timeout, links
 * to its request and reply JSON Schemas (one file each, so another team's validator or code
 * generator can take them as they are), and its error codes. Built from the catalogs alone, as
 * docs/asyncapi.yaml is; a contracts test fails while the checked-in files differ
 * (`pnpm --filter @drael/contracts asyncapi` rewrites all three).
 */

/** The files of one subject's schemas, relative to docs/. */
export function subjectSchemaPaths(subject: string): { request: string; reply: string } {
  return { request: `schemas/${subject}.request.json`, reply: `schemas/${subject}.reply.json` };
}

function titled(schema: JsonSchema, title: string): JsonSchema {
  const { $schema, ...rest } = schema;
  return { $schema, title, ...rest };
}

/** Every schema file under docs/, by its path relative to docs/: a request and a reply schema per subject. */
export function subjectSchemaFiles(): Record<string, JsonSchema> {
  const files: Record<string, JsonSchema> = {};
  for (const entry of Object.values(CATALOGS).flatMap((c) => catalogEntries(c))) {
    const paths = subjectSchemaPaths(entry.subject);
    const schemas = entrySchemas(entry);
    files[paths.request] = titled(schemas.request, `${entry.subject} request`);
    files[paths.reply] = titled(schemas.reply, `${entry.subject} reply envelope`);
  }
  return files;
}

const code = (s: string) => `\`${s}\``;
const seconds = (ms: number) => `${ms / 1000} s`;
const isCommon = (c: string) => (COMMON_ERROR_CODES as readonly string[]).includes(c);

function kindOf(entry: RpcEntry): string {
  const who = entry.delivery === 'every-replica' ? 'every replica' : 'one replica';
  return entry.idempotent ? `${who}, idempotent` : who;
}

function timeoutOf(entry: RpcEntry): string {
  return entry.timeoutFor ? `up to ${seconds(entry.timeoutMs)}, per request` : seconds(entry.timeoutMs);
}

/** The codes a service's subjects answer with beyond the common ones, in declaration order. */
function serviceCodes(entries: RpcEntry[]): string[] {
  return [...new Set(entries.flatMap((e) => e.errors))].filter((c) => !isCommon(c));
}

function codesOf(entry: RpcEntry, service: string, ofService: string[]): string {
  const missing = COMMON_ERROR_CODES.filter((c) => !entry.errors.includes(c));
  const own = entry.errors.filter((c) => !isCommon(c));
  const base = missing.length ? `common but ${missing.map(code).join(', ')}` : 'common';
  if (own.length === 0) return base;
  if (own.length === ofService.length) return `${base} + all of ${service}'s`;
  return `${base} + ${own.map(code).join(', ')}`;
}

/** docs/subjects.md, generated. */
export function subjectsMarkdown(): string {
  const lines = [
    '<!-- Generated from packages/contracts (subjectsMarkdown): do not edit by hand. -->',
    '<!-- Rewrite: pnpm --filter @drael/contracts build && pnpm --filter @drael/contracts asyncapi -->',
    '',
    '# Every NATS subject',
    '',
    'Generated from the catalogs in `packages/contracts`; how to call them (plain JSON, headers,',
    'timeouts, retries, tenancy) is in [calling-services.md](calling-services.md). Each schema link is a',
    'JSON Schema (draft-07) generated from the zod contract the service enforces: the request as it is',
    'sent, the reply as the envelope `{"result": …}` or `{"error": {code, message, retryable, details?}}`.',
    'The same schemas are in [asyncapi.yaml](asyncapi.yaml) and in each endpoint of `$SRV.INFO`.',
    '',
    "- **kind**: *one replica*: a request/reply taken by one replica of the service's queue group",
    '  (named after the service; `<prefix>.<service>` under `DRAEL_NATS_PREFIX`, which prefixes every',
    '  subject too), a `$SRV` endpoint; *every replica*: delivered to every replica outside the queue group, and',
    '  only a replica with something to do answers (expect at most one reply, maybe none; not a `$SRV`',
    '  endpoint); *idempotent*: a read or a replay-safe write, the only kind the typed client sends',
    '  again when the replica serving it is lost.',
    '- **timeout**: the default a caller waits; *per request*: the entry computes it from the request',
    '  (`timeoutFor`), this is the longest.',
    `- **error codes**: *common* = ${COMMON_ERROR_CODES.map(code).join(', ')}, which any subject may answer;`,
    "  the rest are listed once per service below the service's heading.",
  ];
  for (const [service, catalog] of Object.entries(CATALOGS)) {
    const entries = catalogEntries(catalog);
    const own = serviceCodes(entries);
    lines.push('', `## ${service}`, '');
    lines.push(`Contract: [packages/contracts/src/${service}.ts](../packages/contracts/src/${service}.ts); queue group \`${service}\`.`);
    if (own.length) lines.push(`${service}'s own error codes: ${own.map(code).join(', ')}.`);
    lines.push('', '| subject | kind | timeout | request schema | reply schema | error codes |', '| --- | --- | --- | --- | --- | --- |');
    for (const entry of entries) {
      const paths = subjectSchemaPaths(entry.subject);
      lines.push(`| ${code(entry.subject)} | ${kindOf(entry)} | ${timeoutOf(entry)} | [request](${paths.request}) | [reply](${paths.reply}) | ${codesOf(entry, service, own)} |`);
    }
  }
  const routed = SANDBOX_ROUTED_ENTRIES.map((k) => code(sandboxCatalog[k].subject)).join(', ');
  lines.push(
    '',
    '## Subjects derived from the catalog',
    '',
    '| subject | for | schemas |',
    '| --- | --- | --- |',
    `| \`${gatewayCatalog.inferenceChat.subject}.<alias token>\` | callers that need a gateway serving one model alias (\`inferenceRouteToken(alias)\`; "no responders" means none does) | those of ${code(gatewayCatalog.inferenceChat.subject)} |`,
    `| \`sandbox.instance.<replica>.<subject>\` | internal, not for callers: a sandbox replica forwards a session's call to the replica holding the session (\`sandboxInstanceSubject\`; [apps/sandbox/README.md](../apps/sandbox/README.md)) for ${routed} | those of \`<subject>\` |`,
    '',
  );
  return lines.join('\n');
}
