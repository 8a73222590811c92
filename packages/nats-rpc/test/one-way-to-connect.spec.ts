import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every NATS connection of a running app goes through connectNats (nats-security.ts), so none can
// leave out the operator's credentials and TLS: the sandbox's JetStream stores once connected with
// nats.js's own `connect`, and the sandbox could not boot behind a NATS that asks for credentials
// (multi-replica pass, F1). Test tooling (packages/test-support) is not an app and may connect as it likes.
const ROOT = resolve(import.meta.dirname, '../../..');
const OWN = join('packages', 'nats-rpc', 'src', 'nats-security.ts');
const CONNECT = /import\s*\{[^}]*\b(?:connect|wsconnect)\b[^}]*\}\s*from\s*['"]@nats-io\/transport-(?:node|ws)['"]/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'generated' ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('one way to connect to NATS', () => {
  it("no app or library source imports nats.js's connect but connectNats itself", () => {
    const roots = [
      ...readdirSync(join(ROOT, 'apps')).map((a) => join(ROOT, 'apps', a, 'src')),
      ...readdirSync(join(ROOT, 'packages'))
        .filter((p) => p !== 'test-support')
        .map((p) => join(ROOT, 'packages', p, 'src')),
    ];
    const files = roots.flatMap((r) => {
      try {
        return sourceFiles(r);
      } catch {
        return [];
      }
    });
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.filter((f) => relative(ROOT, f) !== OWN && CONNECT.test(readFileSync(f, 'utf8'))).map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });
});
