#!/usr/bin/env node
// Issue 23: the console's initial JavaScript is at most 200 kB gzipped. The build fails past it and
// prints the figure (every script index.html loads, gzipped at level 9 like the gateway serves it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const LIMIT = 200 * 1024;
const dist = new URL('../dist/', import.meta.url).pathname;
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const scripts = [...html.matchAll(/<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="\/console\/([^"]+\.js)"/g)].map((m) => m[1]);
let raw = 0;
let gz = 0;
for (const s of new Set(scripts)) {
  const body = readFileSync(join(dist, s));
  raw += body.length;
  gz += gzipSync(body, { level: 9 }).length;
}
console.log(`console initial JS: ${scripts.length} file(s), ${(raw / 1024).toFixed(1)} kB, ${(gz / 1024).toFixed(1)} kB gzipped (limit ${LIMIT / 1024} kB)`);
if (scripts.length === 0 || gz > LIMIT) process.exit(1);
