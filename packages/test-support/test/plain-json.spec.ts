import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { billingCatalog, CATALOGS, catalogEntries, entrySchemas } from '@drael/contracts';
import { NatsRpcClient, wireSubject } from '@drael/nats-rpc';
import { cleanSandboxInstance, startBillingForTests, startServiceProcess, testPrefix, type ServiceProcess } from '../src/index.js';

// Issue 15 item 9 and issue 22 item 1, against the real services: a caller that does not speak
// Nest's packet (a raw NATS client, as any language has) sends the request itself as JSON and
// gets the reply envelope; garbage gets a typed bad_request at once; a message without a reply
// subject is refused and never runs (no file written, no credit added).
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('plain');
const instance = `test-${prefix.slice(6)}`;
const stateDir = `/var/lib/drael/sandbox-test/${instance}`;
const exec = promisify(execFile);

let billing: ServiceProcess;
let sandbox: ServiceProcess;
let search: ServiceProcess;
let raw: NatsConnection;
let typed: NatsRpcClient;

beforeAll(async () => {
  [billing, sandbox, search] = await Promise.all([
    startBillingForTests({ NATS_URL, DRAEL_NATS_PREFIX: prefix }),
    startServiceProcess(
      'sandbox',
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: prefix,
        SANDBOX_INSTANCE: instance,
        SANDBOX_STATE_DIR: stateDir,
        SANDBOX_MAX_CONCURRENT: '2',
        SANDBOX_WARM_POOL: '0',
        LOG_LEVEL: 'warn',
      },
      { readyTimeoutMs: 60_000 },
    ),
    startServiceProcess(
      'search',
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: prefix,
        SEARXNG_URL: process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890',
        SEARCH_CACHE_PREFIX: `test:${prefix}:`,
        SEARCH_VERIFY: 'false',
      },
      { readyTimeoutMs: 60_000 },
    ),
  ]);
  raw = await connect({ servers: NATS_URL });
  typed = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
}, 120_000);

afterAll(async () => {
  await typed?.close();
  await raw?.close();
  await billing?.stop();
  await sandbox?.stop();
  await search?.stop();
  await cleanSandboxInstance(instance, stateDir, prefix);
});

/** A raw NATS request with a reply subject, the way `nats req` or a Go/Python client sends one. */
async function plain<T = Record<string, unknown>>(subject: string, body: string | object, timeout = 10_000): Promise<T> {
  const msg = await raw.request(wireSubject(subject, prefix), typeof body === 'string' ? body : JSON.stringify(body), { timeout });
  return msg.json<T>();
}

/** Waits until a service has logged that it refused a reply-less message on `subject` (it is then done with it). */
async function refusalLogged(service: ServiceProcess, subject: string, count: number): Promise<void> {
  const needle = `refused a message on ${subject} without a reply subject`;
  for (;;) {
    if (service.output().split(needle).length - 1 >= count) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('billing over plain JSON', () => {
  it('billing.plans.list.v1 with {} answers {"result": …} equal to the typed reply', async () => {
    const reply = await plain<{ result: { plans: unknown[]; etag: string } }>('billing.plans.list.v1', {});
    expect(reply.result).toEqual(await typed.request(billingCatalog.listPlans, {}));
    expect(reply.result.plans.length).toBeGreaterThan(0);
  });

  it('an unknown field is the same bad_request as through the typed client', async () => {
    const reply = await plain<{ error: { code: string; retryable: boolean } }>('billing.plans.list.v1', { surprise: 1 });
    expect(reply.error).toMatchObject({ code: 'bad_request', retryable: false });
  });

  it('garbage is answered bad_request at once (not left to time out)', async () => {
    for (const body of ['{not json', 'plans please', '']) {
      const reply = await plain<{ error: { code: string; message: string } }>('billing.plans.list.v1', body, 5_000);
      expect(reply.error.code).toBe('bad_request');
      expect(reply.error.message).toContain('not JSON');
    }
  });

  it("a service's own typed error arrives in the envelope (wallet of an unknown account)", async () => {
    const reply = await plain<{ error: { code: string } }>('billing.wallet.get.v1', { account_id: '00000000-0000-4000-8000-000000000000' });
    expect(reply.error.code).toMatch(/not_found/);
  });

  it('a reply-less plain credit is refused and never applied', async () => {
    const account = await typed.request(billingCatalog.createAccount, { name: `plain-${prefix}`, plan: 'free' });
    const before = await typed.request(billingCatalog.wallet, { account_id: account.account_id });
    const creditSubject = wireSubject('billing.wallet.credit.v1', prefix);
    raw.publish(creditSubject, JSON.stringify({ account_id: account.account_id, amount_micros: 5_000_000 }));
    raw.publish(creditSubject, JSON.stringify({ pattern: 'billing.wallet.credit.v1', id: 'no-reply', data: { account_id: account.account_id, amount_micros: 7_000_000 } }));
    await raw.flush();
    await refusalLogged(billing, 'billing.wallet.credit.v1', 2);
    expect(await typed.request(billingCatalog.wallet, { account_id: account.account_id })).toEqual(before);
    // The same credit with a reply subject is applied and answered.
    const credited = await plain<{ result: { balance_micros: number } }>('billing.wallet.credit.v1', { account_id: account.account_id, amount_micros: 5_000_000 });
    expect(credited.result.balance_micros).toBe(before.balance_micros + 5_000_000);
  });
});

describe('sandbox over plain JSON', () => {
  const tenant = `plain-${prefix}`;
  const session = 'plain-json';

  it('sandbox.run.v1 runs and answers the envelope', async () => {
    const reply = await plain<{ result: { ok: boolean; stdout: string; exit_code: number } }>(
      'sandbox.run.v1',
      { tenant, session, runtime: 'python', code: "open('seen.txt','w').write('x'); print(6*7)" },
      60_000,
    );
    expect(reply.result).toMatchObject({ ok: true, exit_code: 0, stdout: '42\n' });
  });

  it('a bad runtime is a typed bad_request naming the field', async () => {
    const reply = await plain<{ error: { code: string; message: string } }>('sandbox.run.v1', { tenant, runtime: 'cobol', code: '1' });
    expect(reply.error.code).toBe('bad_request');
    expect(reply.error.message).toContain('runtime');
  });

  it('garbage is answered bad_request at once', async () => {
    const reply = await plain<{ error: { code: string } }>('sandbox.run.v1', 'print(1)', 5_000);
    expect(reply.error.code).toBe('bad_request');
  });

  it('sandbox.run.cancel.v1 (a broadcast, outside the queue group) takes plain JSON too', async () => {
    const garbage = await plain<{ error: { code: string } }>('sandbox.run.cancel.v1', 'stop it', 5_000);
    expect(garbage.error.code).toBe('bad_request');
    const invalid = await plain<{ error: { code: string; message: string } }>('sandbox.run.cancel.v1', { tenant });
    expect(invalid.error.code).toBe('bad_request');
    expect(invalid.error.message).toContain('run_id');
  });

  it('a reply-less run is refused and writes nothing', async () => {
    const subject = wireSubject('sandbox.run.v1', prefix);
    raw.publish(subject, JSON.stringify({ tenant, session, runtime: 'python', code: "open('ghost.txt','w').write('x')" }));
    raw.publish(subject, JSON.stringify({ pattern: 'sandbox.run.v1', id: 'no-reply', data: { tenant, session, runtime: 'python', code: "open('ghost2.txt','w').write('x')" } }));
    await raw.flush();
    await refusalLogged(sandbox, 'sandbox.run.v1', 2);
    const listed = await plain<{ result: { files: { path: string }[] } }>('sandbox.files.list.v1', { tenant, session });
    expect(listed.result.files.map((f) => f.path)).toEqual(['seen.txt']);
  });
});

// Issue 22's test: clients that are not Node. packages/test-support/python/drael_request.py speaks
// the NATS text protocol over a socket with Python's standard library alone (no nats-py);
// packages/test-support/go/drael-request/main.go is the guide's Go program (nats.go).
const PYTHON_CLIENT = new URL('../python/drael_request.py', import.meta.url).pathname;
const GO_CLIENT_SOURCE = new URL('../go/drael-request/main.go', import.meta.url).pathname;
const GUIDE = new URL('../../../docs/calling-services.md', import.meta.url).pathname;

type ClientResult = { status: number | null; reply: { result?: Record<string, unknown>; error?: { code: string; message: string; retryable: boolean } } };

/** Runs a client program with this run's NATS and prefix; it prints the reply envelope as JSON. */
function runClient(command: string, args: string[]): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH ?? '', NATS_URL, DRAEL_NATS_PREFIX: prefix },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (status) => {
      try {
        resolve({ status, reply: JSON.parse(out) as never });
      } catch {
        reject(new Error(`${command} printed no JSON (exit ${status}): ${out}${err}`));
      }
    });
  });
}

const python = (subject: string, body: string) => runClient('python3', [PYTHON_CLIENT, subject, body]);

// The Go program is built as another team would, but offline: Debian's Go and nats.go
// (golang-go, golang-github-nats-io-go-nats-dev; infra/provision.d/60-go-client.sh) in GOPATH
// mode, since no Go module proxy is reachable from these machines.
const goWork = join(tmpdir(), `drael-go-${prefix}`);
const goBinary = join(goWork, 'drael-request');
const goEnv = {
  PATH: process.env.PATH ?? '',
  HOME: goWork,
  GO111MODULE: 'off',
  GOPATH: '/usr/share/gocode',
  GOCACHE: join(tmpdir(), 'drael-go-build-cache'),
  GOFLAGS: '',
  CGO_ENABLED: '0',
};
const go = (subject: string, body: string) => runClient(goBinary, [subject, body]);

/** The same calls and the same checks for every non-Node client. */
function clientCalls(call: (subject: string, body: string) => Promise<ClientResult>, tenant: string) {
  it('billing.plans.list.v1: the plans', async () => {
    const { status, reply } = await call('billing.plans.list.v1', '{}');
    expect(status).toBe(0);
    expect(reply.result).toEqual(await typed.request(billingCatalog.listPlans, {}));
  });

  it('sandbox.run.v1: runs the code', async () => {
    const { status, reply } = await call('sandbox.run.v1', JSON.stringify({ tenant, runtime: 'bash', code: 'echo $((6*7))' }));
    expect(status).toBe(0);
    expect(reply.result).toMatchObject({ ok: true, exit_code: 0, stdout: '42\n' });
  });

  it('search.query.v1: an answer in the reply schema (ok with results, or a typed search failure)', async () => {
    const { status, reply } = await call('search.query.v1', JSON.stringify({ query: 'drael test query' }));
    expect(status).toBe(0);
    expect(typeof reply.result?.ok).toBe('boolean');
    expect(reply.result).toHaveProperty('sources_tried');
  });

  it('typed errors: bad input on each service, garbage, and a subject nobody serves', async () => {
    const cases: [string, string, string][] = [
      ['billing.plans.list.v1', '{"x":1}', 'bad_request'],
      ['sandbox.run.v1', '{"tenant":"t","runtime":"cobol","code":"1"}', 'bad_request'],
      ['search.query.v1', '{"query":""}', 'bad_request'],
      ['search.query.v1', 'not json', 'bad_request'],
      ['nobody.here.v1', '{}', 'unavailable'],
    ];
    for (const [subject, body, code] of cases) {
      const { status, reply } = await call(subject, body);
      expect(status, subject).toBe(1);
      expect(reply.error?.code, `${subject} ${body}`).toBe(code);
      expect(typeof reply.error?.retryable).toBe('boolean');
    }
  });
}

describe('a stdlib-only Python client, plain JSON over the NATS text protocol', () => {
  clientCalls(python, `py-${prefix}`);

  it("the guide's Python snippet runs as shown", async () => {
    const snippets = [...readFileSync(GUIDE, 'utf8').matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(snippets).toHaveLength(1);
    const { stdout } = await exec('python3', ['-c', `${snippets[0]}\nimport json\nprint(json.dumps(plans))`], {
      env: { PATH: process.env.PATH ?? '', NATS_URL, DRAEL_NATS_PREFIX: prefix, PYTHONPATH: dirname(PYTHON_CLIENT), PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(JSON.parse(stdout)).toEqual((await typed.request(billingCatalog.listPlans, {})).plans);
  });
});

describe("the guide's Go program (nats.go), built and run", () => {
  beforeAll(async () => {
    await mkdir(goWork, { recursive: true });
    await exec('go', ['build', '-o', goBinary, GO_CLIENT_SOURCE], { env: goEnv });
  }, 300_000);
  afterAll(() => rm(goWork, { recursive: true, force: true }));

  it('is the program docs/calling-services.md shows, gofmt-clean', async () => {
    const blocks = [...readFileSync(GUIDE, 'utf8').matchAll(/```go\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toEqual([readFileSync(GO_CLIENT_SOURCE, 'utf8')]);
    expect((await exec('gofmt', ['-l', GO_CLIENT_SOURCE], { env: goEnv })).stdout).toBe('');
  });

  clientCalls(go, `go-${prefix}`);
});

/**
 * The guide's `nats req` lines, parsed into what the `nats` CLI would send: subject, body (the
 * quoted argument, byte for byte), headers (`-H name:value`) and timeout. Any other option fails
 * the parse, so the guide cannot show a call this test does not send.
 */
function guideCliCalls(): { line: string; subject: string; body: string; headers: [string, string][]; timeoutMs: number }[] {
  const guide = readFileSync(GUIDE, 'utf8');
  return guide
    .split('\n')
    .filter((line) => line.startsWith('nats req '))
    .map((line) => {
      const words = [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
      const [, , subject, body, ...options] = words;
      const call = { line, subject: subject!, body: body!, headers: [] as [string, string][], timeoutMs: 5_000 };
      for (let i = 0; i < options.length; i += 2) {
        const [option, value] = [options[i], options[i + 1]];
        if (option === '-H' && value?.includes(':')) call.headers.push([value.slice(0, value.indexOf(':')), value.slice(value.indexOf(':') + 1)]);
        else if (option === '--timeout' && /^\d+s$/.test(value ?? '')) call.timeoutMs = Number.parseInt(value!, 10) * 1000;
        else throw new Error(`docs/calling-services.md: \`${line}\`: the test does not send option ${option} ${value}`);
      }
      return call;
    });
}

describe("the guide's `nats req` calls (the CLI is not on these machines; the same subject and bytes)", () => {
  it('the guide shows calls of billing, sandbox and search', () => {
    expect(guideCliCalls().map((c) => c.subject)).toEqual(expect.arrayContaining(['billing.plans.list.v1', 'sandbox.run.v1', 'search.query.v1']));
  });

  it('each is answered with a result', async () => {
    for (const call of guideCliCalls()) {
      const hdrs = natsHeaders();
      for (const [name, value] of call.headers) hdrs.set(name, value);
      const msg = await raw.request(wireSubject(call.subject, prefix), new TextEncoder().encode(call.body), { timeout: call.timeoutMs, headers: hdrs });
      const reply = msg.json<{ result?: { ok?: boolean; stdout?: string } }>();
      expect(reply.result, call.line).toBeDefined();
      if (call.subject === 'sandbox.run.v1') expect(reply.result).toMatchObject({ ok: true, stdout: '42\n' });
    }
  });
});

describe('NATS micro registration of the real services', () => {
  /** Every instance of a service answers $SRV.INFO.<service>; this run's is the one with this prefix. */
  async function infoOf(service: 'billing' | 'sandbox' | 'search') {
    const inbox = `_INBOX.srv-${prefix}-${service}`;
    const infos: { id: string; metadata: Record<string, string>; endpoints: { subject: string; queue_group: string; metadata: Record<string, string> }[] }[] = [];
    const sub = raw.subscribe(inbox, { callback: (_e, m) => void infos.push(m.json()) });
    raw.publish(`$SRV.INFO.${service}`, '', { reply: inbox });
    await raw.flush();
    for (let i = 0; i < 200 && !infos.some((x) => x.metadata?.prefix === prefix); i++) await new Promise((r) => setTimeout(r, 25));
    sub.unsubscribe();
    const info = infos.find((x) => x.metadata?.prefix === prefix);
    expect(info, `${service} answered $SRV.INFO`).toBeDefined();
    return info!;
  }

  it.each(['billing', 'sandbox', 'search'] as const)('$SRV.INFO.%s lists every catalog entry with the generated schemas', async (service) => {
    const info = await infoOf(service);
    for (const entry of catalogEntries(CATALOGS[service])) {
      // A broadcast to every replica (sandbox.run.cancel.v1, run-cancel.listener.ts) is not an endpoint.
      if (entry.delivery === 'every-replica') continue;
      const endpoint = info.endpoints.find((e) => e.subject === wireSubject(entry.subject, prefix));
      expect(endpoint, entry.subject).toBeDefined();
      expect(endpoint!.queue_group).toBe(`${prefix}.${service}`);
      expect(JSON.parse(endpoint!.metadata.request_schema!)).toEqual(entrySchemas(entry).request);
      expect(JSON.parse(endpoint!.metadata.reply_schema!)).toEqual(entrySchemas(entry).reply);
    }
  });

  it('$SRV.STATS of billing counts a plain request and an error reply', async () => {
    const { id } = await infoOf('billing');
    const stats = async () =>
      (await raw.request(`$SRV.STATS.billing.${id}`, '', { timeout: 5000 }))
        .json<{ endpoints: { subject: string; num_requests: number; num_errors: number }[] }>()
        .endpoints.find((e) => e.subject === wireSubject('billing.plans.list.v1', prefix))!;
    const before = await stats();
    await plain('billing.plans.list.v1', {});
    await plain('billing.plans.list.v1', { wrong: true });
    const after = await stats();
    expect(after.num_requests).toBe(before.num_requests + 2);
    expect(after.num_errors).toBe(before.num_errors + 1);
  });
});
