import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGS, COMMON_ERROR_CODES, GATEWAY_HTTP_ONLY_ERROR_CODES, SERVICE_ERROR_CODES, type Catalog } from '@drael/contracts';
import { handlerThrows, type ServiceThrows } from './handler-throws.js';

// Each subject declares the codes its handler can answer with, and only those (packages/contracts):
// the decorator turns an undeclared code into `internal` at run time (rpc.spec.ts), and a declared
// code nothing throws is a promise to callers (and to the generated subjects.md and AsyncAPI documents)
// that does not hold. This reads every handler's reachable throw sites (handler-throws.ts) and
// holds each subject's list to them, both ways.

const root = resolve(import.meta.dirname, '../../..');

/** Each service's own enum: every code any of its subjects may declare (the gateway maps them all). */
const SERVICE_CODES: Record<keyof typeof CATALOGS, readonly string[]> = SERVICE_ERROR_CODES;

/** Catalogs by the name code refers to them with (`billingCatalog.hold`). */
const CATALOG_BY_NAME: Record<string, Catalog> = Object.fromEntries(
  Object.entries(CATALOGS).map(([service, catalog]) => [`${service.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}Catalog`, catalog]),
);

const common = new Set<string>(COMMON_ERROR_CODES);

/** Codes of a service's enum no subject answers with, each with where it is raised instead. */
const RAISED_ELSEWHERE: Partial<Record<keyof typeof CATALOGS, readonly string[]>> = {
  // The gateway's HTTP surface (its ApiErrors, mapped in apps/gateway/src/errors/error-mapping.ts).
  gateway: GATEWAY_HTTP_ONLY_ERROR_CODES,
  // The gateway's answer on /v1/tools/search when the search service fails (tools-api/search).
  search: ['search_unavailable'],
};

/** Where one service's subjects and its handlers' throw sites disagree. */
function problemsOf(catalog: Catalog, serviceCodes: readonly string[], found: ServiceThrows): string[] {
  const problems = found.untyped.map((at) => `${at}: new RpcError(...): throw the service's typed error instead`);
  const own = new Set(serviceCodes);
  const handled = new Set(found.handlers.map((h) => h.key));
  for (const h of found.handlers) {
    const entry = catalog[h.key];
    if (!entry) {
      problems.push(`${h.handler}: handles ${h.key}, which the catalog does not have`);
      continue;
    }
    const declared = new Set<string>(entry.errors);
    const thrown = new Map<string, string>(h.sites.map((s) => [s.code, s.at]));
    // A code of a called subject passes through when the caller's subject declares it (else the
    // decorator answers `internal`): the service's own codes among the callee's, common ones aside.
    for (const call of h.calls) {
      const [name, key] = call.split('.') as [string, string];
      for (const code of CATALOG_BY_NAME[name]?.[key]?.errors ?? []) if (own.has(code) && !common.has(code) && !thrown.has(code)) thrown.set(code, `through ${call}`);
    }
    for (const at of h.unknown) problems.push(`${h.handler} (${entry.subject}): ${at}: the code is not a literal (or a union of literals) the scan can read`);
    for (const [code, at] of thrown) if (!declared.has(code)) problems.push(`${h.handler} (${entry.subject}): throws '${code}' (${at}), which the subject does not declare`);
    for (const code of declared) if (!common.has(code) && !thrown.has(code)) problems.push(`${h.handler} (${entry.subject}): declares '${code}', which nothing it reaches throws`);
  }
  // Subjects no @Handles method answers (health, answered by packages/nats-rpc; the sandbox's cancel
  // broadcast, by its listener) answer only what a malformed request gets: the common codes.
  for (const [key, entry] of Object.entries(catalog)) {
    if (handled.has(key)) continue;
    const extra = entry.errors.filter((c) => !common.has(c));
    if (extra.length > 0) problems.push(`${entry.subject}: no @Handles method answers it, yet it declares ${extra.join(', ')}`);
  }
  return problems;
}

describe('declared error codes, per subject', () => {
  const services = Object.keys(CATALOGS) as (keyof typeof CATALOGS)[];
  let found: Map<string, ServiceThrows>;
  beforeAll(() => {
    // One TypeScript program over every service (about 20 s of CPU; minutes on a busy machine).
    found = handlerThrows(root, services);
  }, 600_000);

  for (const service of services) {
    it(`${service}: each subject declares exactly the codes its handler can throw, and every throw is typed`, () => {
      const mine = found.get(service)!;
      expect(problemsOf(CATALOGS[service], SERVICE_CODES[service], mine)).toEqual([]);
      // The scan saw the service's handlers and throw sites (a renamed decorator or error class would otherwise pass silently).
      expect(mine.handlers.length).toBeGreaterThan(0);
      expect(mine.handlers.some((h) => h.sites.length > 0)).toBe(true);
    });
  }

  it('every code of a service enum is declared by some subject, or raised elsewhere on purpose (else it is dead)', () => {
    for (const service of services) {
      const declared = new Set(Object.values(CATALOGS[service] as Catalog).flatMap((e) => [...e.errors]));
      expect(
        SERVICE_CODES[service].filter((c) => !declared.has(c)),
        service,
      ).toEqual(RAISED_ELSEWHERE[service] ?? []);
    }
  });
});

describe('the scan itself', () => {
  // A small service on disk: a handler reaching a factory, a class behind an interface, a route
  // bound to its entry by an object literal, and a call of another service's subject.
  let dir: string;
  let found: ServiceThrows;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'handler-throws-'));
    const src = join(dir, 'apps', 'demo', 'src');
    mkdirSync(src, { recursive: true });
    writeFileSync(
      join(src, 'demo.ts'),
      `
export class RpcError extends Error { constructor(readonly code: string, message: string) { super(message); } }
class DemoError extends RpcError { constructor(readonly code: 'a' | 'b' | 'c' | 'd' | 'e', message: string) { super(code, message); } }
const demoError = (code: 'a' | 'b' | 'c' | 'd' | 'e', why: string) => new DemoError(code, why);
declare function Handles(entry: unknown): MethodDecorator;
declare const demoCatalog: { one: unknown; two: unknown; three: unknown };
declare const billingCatalog: { hold: unknown };
declare const rpc: { request(entry: unknown, body: unknown): Promise<unknown> };
interface Store { get(id: string): string }
export class MemoryStore implements Store { get(id: string): string { if (!id) throw demoError('b', 'no id'); return id; } }
export class Router {
  private readonly routes = new Map<unknown, { local(): void }>();
  register(r: { entry: unknown; local(): void }) { this.routes.set(r.entry, r); }
  call(entry: unknown) { this.routes.get(entry)!.local(); }
}
export class Demo {
  constructor(private readonly store: Store, private readonly router: Router) {
    router.register({ entry: demoCatalog.three, local: () => this.deep() });
  }
  @Handles(demoCatalog.one)
  one(id: string) { if (id === 'x') throw demoError('a', 'x'); return this.store.get(id); }
  @Handles(demoCatalog.two)
  async two() { await rpc.request(billingCatalog.hold, {}); throw new RpcError('internal', 'untyped'); }
  @Handles(demoCatalog.three)
  three() { return this.router.call(demoCatalog.three); }
  private deep() { const code: 'c' | 'd' = Math.random() > 0.5 ? 'c' : 'd'; throw new DemoError(code, 'deep'); }
}
`,
    );
    found = handlerThrows(dir, ['demo']).get('demo')!;
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('follows calls, factories, interface implementations and routes bound to an entry', () => {
    const codes = Object.fromEntries(found.handlers.map((h) => [h.key, [...new Set(h.sites.map((s) => s.code))].sort()]));
    expect(codes).toEqual({ one: ['a', 'b'], two: ['internal'], three: ['c', 'd'] });
    expect(found.handlers.find((h) => h.key === 'two')!.calls).toEqual(['billingCatalog.hold']);
    expect(found.untyped).toHaveLength(1);
  });

  it('reports an undeclared code, a declared code nothing throws, a pass-through and an untyped throw', () => {
    const entry = (subject: string, errors: string[]) => ({ subject, service: 'sandbox', request: {}, reply: {}, errors, timeoutMs: 1 }) as unknown as Catalog[string];
    const catalog: Catalog = {
      one: entry('demo.one.v1', [...COMMON_ERROR_CODES, 'a']),
      two: entry('demo.two.v1', [...COMMON_ERROR_CODES]),
      three: entry('demo.three.v1', [...COMMON_ERROR_CODES, 'c', 'd', 'e']),
      other: entry('demo.other.v1', [...COMMON_ERROR_CODES, 'a']),
    };
    // A code of billing's hold subject that the demo service's enum has too passes through its call.
    const passing = CATALOGS.billing.hold.errors.find((c) => !common.has(c))!;
    const problems = problemsOf(catalog, [...COMMON_ERROR_CODES, 'a', 'b', 'c', 'd', 'e', passing], found).map((p) => p.replace(/apps\/demo\/src\/demo\.ts:\d+/g, 'demo.ts'));
    expect(problems).toEqual([
      "demo.ts: new RpcError(...): throw the service's typed error instead",
      "Demo.one (demo.one.v1): throws 'b' (demo.ts), which the subject does not declare",
      `Demo.two (demo.two.v1): throws '${passing}' (through billingCatalog.hold), which the subject does not declare`,
      "Demo.three (demo.three.v1): declares 'e', which nothing it reaches throws",
      'demo.other.v1: no @Handles method answers it, yet it declares a',
    ]);
  });
});
