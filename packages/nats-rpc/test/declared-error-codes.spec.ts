import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGS, type Catalog } from '@drael/contracts';

// Every code a service's handlers can throw must be declared by the subjects it handles
// (packages/contracts). The decorator turns an undeclared code into `internal` at run time
// (rpc.spec.ts); this test finds it before then, reading every throw site of every service.

const root = resolve(import.meta.dirname, '../../..');

/** Per service: the typed error constructors and factories its code throws with. */
const TYPED_ERRORS: Record<keyof typeof CATALOGS, readonly string[]> = {
  sandbox: ['SandboxError'],
  search: ['SearchError'],
  fetch: ['FetchError', 'fetchError'],
  billing: ['BillingError', 'billingError'],
  'agent-run': ['AgentRunError'],
  // The gateway answers one subject (gateway.inference.v1); its HTTP errors (ApiError) never cross NATS.
  gateway: ['InferenceError'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

interface Finding {
  file: string;
  problem: string;
}

/** The problems in one service's sources: an untyped RpcError, or a thrown code its handled subjects do not declare. */
function undeclaredThrows(catalog: Catalog, typedErrors: readonly string[], files: ReadonlyMap<string, string>): { findings: Finding[]; codes: Set<string> } {
  const entries = Object.values(catalog);
  const handled = new Set<string>();
  for (const text of files.values()) {
    for (const m of text.matchAll(/@Handles\(\s*\w+\.(\w+)\s*\)/g)) handled.add(m[1]!);
  }
  const bySubjectKey = new Map(Object.entries(catalog));
  const declared = new Set<string>([...handled].flatMap((key) => bySubjectKey.get(key)?.errors ?? []));
  // A service with only the boot-added health subject still declares the common codes through it.
  for (const e of entries) if (e.subject.endsWith('.health.v1')) for (const c of e.errors) declared.add(c);

  const findings: Finding[] = [];
  const codes = new Set<string>();
  const site = new RegExp(`\\b(?:new\\s+)?(${typedErrors.join('|')})\\(\\s*'([^']+)'`, 'g');
  for (const [file, text] of files) {
    if (/\bnew\s+RpcError\(/.test(text)) findings.push({ file, problem: `new RpcError(...): throw the service's typed error (${typedErrors[0]}) instead` });
    for (const m of text.matchAll(site)) {
      codes.add(m[2]!);
      if (!declared.has(m[2]!)) findings.push({ file, problem: `${m[1]}('${m[2]}'): no subject this service handles declares '${m[2]}'` });
    }
  }
  return { findings, codes };
}

describe('declared error codes', () => {
  for (const [service, catalog] of Object.entries(CATALOGS) as [keyof typeof CATALOGS, Catalog][]) {
    it(`${service}: every code thrown is declared by a subject it handles, and every throw is typed`, () => {
      const dir = join(root, 'apps', service, 'src');
      const files = new Map(sourceFiles(dir).map((f) => [relative(root, f), readFileSync(f, 'utf8')]));
      const { findings, codes } = undeclaredThrows(catalog, TYPED_ERRORS[service], files);
      expect(findings).toEqual([]);
      // The scan saw the service's throw sites (a renamed error class would otherwise pass silently).
      expect(codes.size).toBeGreaterThan(0);
    });
  }

  it('catches an undeclared code and an untyped RpcError', () => {
    const files = new Map([
      ['x/controller.ts', '@Handles(sandboxCatalog.filesRead)\nread() {}'],
      ['x/service.ts', "throw new SandboxError('search_unavailable', 'no');\nthrow new SandboxError('file_not_found', 'no');\nthrow new RpcError('internal', 'x');"],
    ]);
    const { findings } = undeclaredThrows(CATALOGS.sandbox, ['SandboxError'], files);
    expect(findings.map((f) => f.problem)).toEqual([
      "new RpcError(...): throw the service's typed error (SandboxError) instead",
      "SandboxError('search_unavailable'): no subject this service handles declares 'search_unavailable'",
    ]);
  });
});
