#!/usr/bin/env node
// Writes docs/openapi.json and docs/http-api.html from the built gateway (pnpm --filter @drael/gateway build first).
// src/openapi/openapi.document.spec.ts fails while either checked-in file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../dist/openapi/openapi.document.js';
import { referencePage } from '../dist/openapi/reference-page.js';

const docs = new URL('../../../docs/', import.meta.url);
const doc = openApiDocument();
writeFileSync(new URL('openapi.json', docs), `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync(new URL('http-api.html', docs), referencePage(doc));
console.log(`wrote ${new URL('openapi.json', docs).pathname} and http-api.html`);
