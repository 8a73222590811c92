import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { get as httpGet } from 'node:http';

// ajv-formats is CommonJS: its default export arrives as the module object under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

interface MediaType {
  schema?: object;
}
interface ResponseObject {
  $ref?: string;
  description?: string;
  content?: Record<string, MediaType>;
}
interface OperationObject {
  'x-drael-route': string;
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components?: { responses?: Record<string, ResponseObject> };
}

interface CompiledOperation {
  method: string;
  route: string;
  pattern: RegExp;
  // Fastify's order: a static route before a parametric one before a wildcard.
  rank: number;
  responses: Map<string, { content: Map<string, Lazy | null> }>;
}

/** A JSON Schema compiled on first use: compiling a whole document blocks the event loop for seconds under load. */
class Lazy {
  private fn?: ValidateFunction;
  constructor(
    private readonly ajv: Ajv2020,
    private readonly schema: object,
  ) {}
  get(): ValidateFunction {
    return (this.fn ??= this.ajv.compile(this.schema));
  }
}

/** `/v1/agents/:agent_id` → a RegExp of the paths Fastify routes there (`*` takes the rest, slashes too). */
function patternOf(route: string): RegExp {
  const source = route
    .split('/')
    .map((seg) => (seg === '*' ? '.*' : seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/**
 * Checks HTTP answers against an OpenAPI 3.1 document (the gateway's /openapi.json): the status
 * must be one the operation declares (exactly, or by its `4XX`/`5XX` range), the content type one
 * it declares for that status, and a JSON body must match the declared schema (JSON Schema
 * 2020-12, checked by Ajv, formats included). An answer to a path no operation matches is not
 * judged (the edge tests send encoded spellings that name no route).
 */
export class OpenApiValidator {
  private readonly operations: CompiledOperation[] = [];

  constructor(doc: OpenApiDoc) {
    if (!doc.openapi?.startsWith('3.1')) throw new Error(`not an OpenAPI 3.1 document: ${doc.openapi}`);
    const ajv = new Ajv2020({ strict: false, allErrors: false });
    addFormats(ajv);
    // zod writes these beside the `pattern` that carries the same rule: nothing more to check.
    for (const format of ['starts_with', 'ends_with', 'includes']) ajv.addFormat(format, true);
    const shared = doc.components?.responses ?? {};
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const route = op['x-drael-route'] ?? path.replace(/\{(\w+)\}/g, ':$1');
        const responses = new Map<string, { content: Map<string, Lazy | null> }>();
        for (const [status, declared] of Object.entries(op.responses)) {
          const r = declared.$ref ? shared[declared.$ref.replace('#/components/responses/', '')] : declared;
          if (!r) throw new Error(`${method.toUpperCase()} ${path} ${status}: unresolved ${declared.$ref}`);
          const content = new Map<string, Lazy | null>();
          for (const [type, media] of Object.entries(r.content ?? {})) {
            content.set(type, type === 'application/json' && media.schema ? new Lazy(ajv, media.schema) : null);
          }
          responses.set(status, { content });
        }
        const rank = route.endsWith('*') ? 2 : route.includes(':') ? 1 : 0;
        this.operations.push({ method: method.toUpperCase(), route, pattern: patternOf(route), rank, responses });
      }
    }
    this.operations.sort((a, b) => a.rank - b.rank);
  }

  /** Compiles every schema of the document: throws when one is not valid JSON Schema 2020-12. */
  compileAll(): number {
    let n = 0;
    for (const op of this.operations) {
      for (const r of op.responses.values()) {
        for (const v of r.content.values()) {
          if (!v) continue;
          v.get();
          n += 1;
        }
      }
    }
    return n;
  }

  /** The operation Fastify would route `METHOD path` to (HEAD as its GET), or undefined. */
  operationOf(method: string, path: string): { method: string; route: string } | undefined {
    const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    return this.operations.find((op) => op.method === m && op.pattern.test(path));
  }

  /** What is wrong with one answer; empty when it matches the document (or names no operation). */
  check(method: string, path: string, status: number, contentType: string | null, body: string | undefined): string[] {
    const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    const op = this.operations.find((o) => o.method === m && o.pattern.test(path));
    if (!op) return [];
    const what = `${method.toUpperCase()} ${path} → ${status}`;
    const declared = op.responses.get(String(status)) ?? op.responses.get(`${String(status)[0]}XX`) ?? op.responses.get('default');
    if (!declared) return [`${what}: status not in the document for ${op.method} ${op.route} (declared: ${[...op.responses.keys()].join(', ')})`];
    if (method.toUpperCase() === 'HEAD' || declared.content.size === 0) return [];
    const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (type === '' && (body ?? '') === '') return [];
    if (declared.content.has('*/*')) return [];
    if (!declared.content.has(type)) return [`${what}: content type '${type}' not in the document (declared: ${[...declared.content.keys()].join(', ')})`];
    const validate = declared.content.get(type)?.get();
    if (!validate || body === undefined) return [];
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return [`${what}: body is not JSON: ${body.slice(0, 120)}`];
    }
    if (validate(value)) return [];
    const errors = (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${e.params ? JSON.stringify(e.params) : ''}`);
    return [`${what}: body does not match the document: ${errors.join('; ')}; body: ${body.slice(0, 300)}`];
  }
}

// Shared by every copy of this module a test run may load (setup file and test file alike).
interface CheckState {
  origins: Map<string, Promise<OpenApiValidator>>;
  violations: string[];
  installed: boolean;
  checked: number;
}
const STATE = Symbol.for('drael.test-support.openapi-check');
function state(): CheckState {
  const g = globalThis as unknown as Record<symbol, CheckState | undefined>;
  return (g[STATE] ??= { origins: new Map(), violations: [], installed: false, checked: 0 });
}

/**
 * GET on a connection of its own, closed after the answer: fetch would leave a pooled keep-alive
 * socket to the gateway idle until the test's first request, which on a loaded machine can reuse
 * it just as the server closes it (ECONNRESET in a test that did nothing wrong).
 */
function getOnce(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`GET ${url} answered ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * A gateway started by this test run: its answers are checked against the document it serves.
 * Called by startGatewayProcess once the gateway answers; the document is loaded right away.
 */
export function registerGatewayForOpenApiCheck(origin: string): void {
  const s = state();
  if (s.origins.has(origin)) return;
  const load = getOnce(`${origin}/openapi.json`).then((text) => new OpenApiValidator(JSON.parse(text) as OpenApiDoc));
  // Reported when an answer from this gateway is checked, not here (a test may never make one).
  load.catch(() => undefined);
  s.origins.set(origin, load);
}

/**
 * Judges one answer from a registered gateway (by its origin) and records what is wrong. For
 * callers that speak HTTP themselves (raw sockets) rather than through the wrapped fetch.
 */
export async function checkGatewayAnswer(origin: string, method: string, path: string, status: number, contentType: string | null, body: string | undefined): Promise<void> {
  const s = state();
  const load = s.origins.get(origin);
  if (!load) return;
  let validator: OpenApiValidator;
  try {
    validator = await load;
  } catch (err) {
    s.violations.push(`could not load the document of ${origin}: ${(err as Error).message}`);
    return;
  }
  s.checked += 1;
  // The path as sent (a raw-socket caller's `/./v1/...` is not folded onto a route it did not reach).
  s.violations.push(...validator.check(method, path.split('?', 1)[0]!, status, contentType, body));
}

/**
 * Wraps the global fetch so that every answer from a registered gateway is checked against its
 * /openapi.json (issue 22: the document cannot drift from the code). A JSON body is read from a
 * clone before the caller gets the response; a stream's status and content type are checked, its
 * events are not. Violations are collected; `takeOpenApiViolations()` hands them to the test.
 */
export function installOpenApiFetchCheck(): void {
  const s = state();
  if (s.installed) return;
  s.installed = true;
  const inner = globalThis.fetch;
  // A const first: V8 pretenures a function literal assigned to a property (eslint.config.js).
  const checkedFetch = async (input: string | URL | Request, init?: RequestInit) => {
    const res = await inner(input, init);
    const url = input instanceof Request ? input.url : String(input);
    let origin: string;
    let path: string;
    try {
      ({ origin, pathname: path } = new URL(url));
    } catch {
      return res;
    }
    if (!s.origins.has(origin)) return res;
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const type = res.headers.get('content-type');
    const body = method.toUpperCase() !== 'HEAD' && /\bjson\b/i.test(type ?? '') ? await res.clone().text() : undefined;
    await checkGatewayAnswer(origin, method, path, res.status, type, body);
    return res;
  };
  globalThis.fetch = checkedFetch;
}

/** The violations recorded since the last call (and forgets them). */
export function takeOpenApiViolations(): string[] {
  const s = state();
  return s.violations.splice(0);
}

/** How many answers were judged so far (a test of the checker itself asserts it is not idle). */
export function openApiCheckedCount(): number {
  return state().checked;
}
