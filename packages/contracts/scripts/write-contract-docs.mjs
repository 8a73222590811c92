#!/usr/bin/env node
// Writes the contract documents from the built contracts (pnpm --filter @drael/contracts build first):
// docs/asyncapi.yaml, docs/subjects.md and docs/schemas/<subject>.{request,reply}.json (schema files
// of subjects that are gone are removed). test/contract-docs.spec.ts fails while a checked-in file
// differs from what this writes.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { asyncApiDocument, subjectSchemaFiles, subjectsMarkdown } from '../dist/index.js';

const docs = new URL('../../../docs/', import.meta.url);
const header =
  '# Generated from packages/contracts (asyncApiDocument): do not edit by hand.\n# Rewrite: pnpm --filter @drael/contracts build && pnpm --filter @drael/contracts asyncapi\n';
writeFileSync(new URL('asyncapi.yaml', docs), header + stringify(asyncApiDocument(), { aliasDuplicateObjects: false, lineWidth: 0 }));
writeFileSync(new URL('subjects.md', docs), subjectsMarkdown());

const files = subjectSchemaFiles();
mkdirSync(new URL('schemas/', docs), { recursive: true });
for (const name of readdirSync(new URL('schemas/', docs))) {
  if (!(`schemas/${name}` in files)) rmSync(new URL(`schemas/${name}`, docs));
}
for (const [path, schema] of Object.entries(files)) writeFileSync(new URL(path, docs), `${JSON.stringify(schema, null, 2)}\n`);
console.log(`wrote ${docs.pathname}: asyncapi.yaml, subjects.md, ${Object.keys(files).length} files in schemas/`);
