import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { asyncApiDocument, CATALOGS, catalogEntries, entrySchemas, sandboxCatalog, subjectSchemaFiles, subjectSchemaPaths, subjectsMarkdown } from '../src/index.js';

// Issue 22, items 3 and 4: docs/asyncapi.yaml, docs/subjects.md and docs/schemas/ are generated
// from the catalogs (scripts/write-contract-docs.mjs); CI fails while one is stale.
const docs = new URL('../../../docs/', import.meta.url);
const file = new URL('asyncapi.yaml', docs);
const REWRITE = 'rewrite: pnpm --filter @drael/contracts build && pnpm --filter @drael/contracts asyncapi';
const allEntries = () => Object.values(CATALOGS).flatMap((c) => catalogEntries(c));

describe('docs/asyncapi.yaml', () => {
  it(`is what the contracts generate today (${REWRITE})`, () => {
    expect(parse(readFileSync(file, 'utf8'))).toEqual(asyncApiDocument());
  });

  it('has an operation for every subject of every catalog, with its generated request and reply schemas', () => {
    const doc = asyncApiDocument() as {
      channels: Record<string, { address: string | null }>;
      operations: Record<string, { action: string }>;
      components: { messages: Record<string, { payload: { schema: unknown } }> };
    };
    const entries = allEntries();
    expect(Object.keys(doc.operations)).toHaveLength(entries.length);
    for (const entry of entries) {
      const id = entry.subject.replace(/[^\w]/g, '_');
      expect(doc.channels[id]?.address).toBe(entry.subject);
      expect(doc.operations[id]?.action).toBe('receive');
      expect(doc.components.messages[`${id}_request`]?.payload.schema).toEqual(entrySchemas(entry).request);
      expect(doc.components.messages[`${id}_reply`]?.payload.schema).toEqual(entrySchemas(entry).reply);
    }
  });
});

describe('docs/subjects.md and docs/schemas/', () => {
  it(`subjects.md is what the contracts generate today (${REWRITE})`, () => {
    expect(readFileSync(new URL('subjects.md', docs), 'utf8')).toBe(subjectsMarkdown());
  });

  it(`schemas/ holds exactly the generated schema files, each as generated (${REWRITE})`, () => {
    const expected = subjectSchemaFiles();
    expect(
      readdirSync(new URL('schemas/', docs))
        .map((name) => `schemas/${name}`)
        .sort(),
    ).toEqual(Object.keys(expected).sort());
    for (const [path, schema] of Object.entries(expected)) expect(JSON.parse(readFileSync(new URL(path, docs), 'utf8')), path).toEqual(schema);
  });

  it('has one row per subject of every catalog, linking its request and reply schemas', () => {
    const markdown = subjectsMarkdown();
    const files = subjectSchemaFiles();
    for (const entry of allEntries()) {
      const rows = markdown.split('\n').filter((line) => line.startsWith(`| \`${entry.subject}\` |`));
      expect(rows, entry.subject).toHaveLength(1);
      const paths = subjectSchemaPaths(entry.subject);
      expect(rows[0]).toContain(`[request](${paths.request})`);
      expect(rows[0]).toContain(`[reply](${paths.reply})`);
      expect(files[paths.request]).toEqual({ ...entrySchemas(entry).request, title: `${entry.subject} request` });
      expect(files[paths.reply]).toEqual({ ...entrySchemas(entry).reply, title: `${entry.subject} reply envelope` });
    }
  });

  it("states each subject's kind and its codes beyond the common ones", () => {
    const row = (subject: string) =>
      subjectsMarkdown()
        .split('\n')
        .find((line) => line.startsWith(`| \`${subject}\` |`))!;
    expect(row('sandbox.run.cancel.v1')).toContain('| every replica |');
    expect(row('sandbox.files.read.v1')).toContain('| one replica, idempotent |');
    expect(row('sandbox.run.v1')).toContain('| one replica | up to 330 s, per request |');
    expect(row('billing.health.v1')).toMatch(/\| common \|$/);
    const billingCodes = subjectsMarkdown()
      .split('\n')
      .find((line) => line.startsWith("billing's own error codes: "))!;
    for (const code of ['invalid_api_key', 'account_not_found', 'hold_not_found']) expect(billingCodes).toContain(`\`${code}\``);
    // Each subject names only the codes its handler can throw (issue 16): key verification, one.
    expect(row('billing.keys.verify.v1')).toMatch(/\| common \+ `invalid_api_key` \|$/);
    expect(sandboxCatalog.runCancel.delivery).toBe('every-replica');
  });
});

describe('docs/calling-services.md', () => {
  it('links the generated list of every subject', () => {
    const guide = readFileSync(new URL('calling-services.md', docs), 'utf8');
    expect(guide).toContain('](subjects.md)');
  });
});

describe('entrySchemas', () => {
  it('describes a request as it is sent (a defaulted field is optional) and the reply as its envelope', () => {
    const { request, reply } = entrySchemas(CATALOGS.billing.createAccount);
    expect(request).toMatchObject({ type: 'object', required: ['name'] });
    expect(JSON.stringify(reply)).toContain('"result"');
    expect(JSON.stringify(reply)).toContain('"retryable"');
  });
});
