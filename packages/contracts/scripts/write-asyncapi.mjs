#!/usr/bin/env node
// Writes docs/asyncapi.yaml from the built contracts (pnpm --filter @drael/contracts build first).
// test/asyncapi.spec.ts fails while the checked-in file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { asyncApiDocument } from '../dist/index.js';

const target = new URL('../../../docs/asyncapi.yaml', import.meta.url);
const header =
  '# Generated from packages/contracts (asyncApiDocument): do not edit by hand.\n# Rewrite: pnpm --filter @drael/contracts build && pnpm --filter @drael/contracts asyncapi\n';
writeFileSync(target, header + stringify(asyncApiDocument(), { aliasDuplicateObjects: false, lineWidth: 0 }));
console.log(`wrote ${target.pathname}`);
