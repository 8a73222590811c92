import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { NATS_URL, newAccount, startBilling, type Billing } from './billing-harness.js';

// The built operator CLI, spawned as an operator runs it (issue 15, item 10): --help everywhere,
// numbers checked before anything is sent (exit 2 naming the flag, no stack trace), every default
// in the usage, and a key's per-hour limit never silently below 60 x its per-minute one.
const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'billing-cli.js');
let billing: Billing;

beforeAll(async () => {
  billing = await startBilling();
});

afterAll(async () => {
  await billing?.close();
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env: { PATH: process.env.PATH ?? '', NATS_URL, DRAEL_NATS_PREFIX: billing.prefix, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const STACK = /\n\s+at /;
const COMMANDS = ['accounts create', 'accounts extra-usage', 'keys create', 'keys revoke', 'usage', 'plans', 'wallet', 'wallet credit', 'wallet limits'];

describe('--help on every command and subcommand', () => {
  const lines = ['--help', '-h', 'help', 'accounts --help', 'keys --help', 'wallet --help', 'help keys create', ...COMMANDS.map((c) => `${c} --help`)];

  it.each(lines)('`%s` prints the usage and exits 0, without NATS (nothing is sent)', async (line) => {
    const r = await run(line.split(' '), { NATS_URL: 'nats://127.0.0.1:1' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: drael-billing');
    expect(r.stderr).toBe('');
  });

  it.each(COMMANDS)('`%s --help` gives every option a default or says it is required', async (command) => {
    const r = await run([...command.split(' '), '--help']);
    const optionLines = r.stdout.split('\n').filter((l) => /^\s+--/.test(l));
    for (const line of optionLines) expect(line).toMatch(/default|required/);
  });

  it('the overview lists every command and the environment with its defaults', async () => {
    const top = await run(['--help']);
    for (const command of COMMANDS) expect(top.stdout).toContain(command);
    expect(top.stdout).toContain('NATS_URL (default: nats://127.0.0.1:4222)');
  });
});

describe('bad numbers are refused naming the flag: exit 2, no stack trace, nothing sent', () => {
  const cases: [string, string[]][] = [
    ['per-minute', ['keys', 'create', '--account', 'A', '--per-minute', '0']],
    ['per-minute', ['keys', 'create', '--account', 'A', '--per-minute', 'abc']],
    ['per-minute', ['keys', 'create', '--account', 'A', '--per-minute', '-5']],
    ['per-minute', ['keys', 'create', '--account', 'A', '--per-minute=-5']],
    ['per-minute', ['keys', 'create', '--account', 'A', '--per-minute', '1e3']],
    ['per-minute', ['keys', 'create', '--account', 'A', '--per-minute', '2147483648']],
    ['per-hour', ['keys', 'create', '--account', 'A', '--per-hour', '12.5']],
    ['daily-ceiling', ['accounts', 'create', '--name', 'n', '--extra-usage', '--daily-ceiling', '-1']],
    ['daily-ceiling', ['accounts', 'extra-usage', '--account', 'A', '--enable', '--daily-ceiling', '1000000000000']],
    ['amount-usd', ['wallet', 'credit', '--account', 'A', '--amount-usd', '0']],
    ['amount-usd', ['wallet', 'credit', '--account', 'A', '--amount-usd', '-10']],
    ['amount-usd', ['wallet', 'credit', '--account', 'A', '--amount-usd', 'ten']],
    ['monthly-budget-usd', ['wallet', 'limits', '--account', 'A', '--monthly-budget-usd', '-1']],
    ['steps-per-minute', ['wallet', 'limits', '--account', 'A', '--steps-per-minute', '0']],
    ['tool-level', ['keys', 'create', '--account', 'A', '--tool-level', 'root']],
    ['expires-at', ['keys', 'create', '--account', 'A', '--expires-at', 'tomorrow']],
    ['expires-at', ['keys', 'create', '--account', 'A', '--expires-at', '2027-01-31']],
    ['bogus', ['keys', 'create', '--account', 'A', '--bogus', '1']],
  ];

  it.each(cases)('--%s in %j', async (flag, args) => {
    // An unreachable NATS: were anything sent, the exit would be 1, not 2.
    const r = await run(args, { NATS_URL: 'nats://127.0.0.1:1' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--${flag}`);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stdout).toBe('');
  });
});

describe('keys create --expires-at', () => {
  it('a key with an expiry prints it; billing verifies the key with it', async () => {
    const account = await newAccount(billing);
    const r = await run(['keys', 'create', '--account', account, '--expires-at', '2099-01-31T00:00:00Z']);
    expect(r.status, r.stderr).toBe(0);
    const created = JSON.parse(r.stdout) as { api_key: string; expires_at: string };
    expect(created.expires_at).toBe('2099-01-31T00:00:00.000Z');
    expect((await billing.rpc(billingCatalog.verifyKey, { api_key: created.api_key })).expires_at).toBe('2099-01-31T00:00:00.000Z');
  });

  it("a time in the past is billing's bad_request, one line naming expires_at, exit 2 (a mistake in the command line), and no key is made", async () => {
    const account = await newAccount(billing);
    const r = await run(['keys', 'create', '--account', account, '--expires-at', '2001-01-01T00:00:00Z']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('bad_request');
    expect(r.stderr).toContain('expires_at');
    expect(r.stderr).not.toMatch(STACK);
    expect((await billing.rpc(billingCatalog.listKeys, { account_id: account })).keys).toEqual([]);
  });
});

describe("a key's per-hour limit is never silently below 60 x its per-minute limit", () => {
  const verified = async (stdout: string) => {
    const created = JSON.parse(stdout) as { api_key: string };
    return (await billing.rpc(billingCatalog.verifyKey, { api_key: created.api_key })).rate_limit;
  };

  it('--per-minute alone: per-hour is derived as 60 x per-minute (was capped at 1,000)', async () => {
    const account = await newAccount(billing);
    const r = await run(['keys', 'create', '--account', account, '--per-minute', '2000']);
    expect(r.status, r.stderr).toBe(0);
    expect(await verified(r.stdout)).toEqual({ per_minute: 2000, per_hour: 120_000 });
  });

  it('no limits given: the usage text defaults, 60 a minute and 3,600 an hour', async () => {
    const account = await newAccount(billing);
    const r = await run(['keys', 'create', '--account', account]);
    expect(r.status, r.stderr).toBe(0);
    expect(await verified(r.stdout)).toEqual({ per_minute: 60, per_hour: 3600 });
  });

  it('both given, per-hour at least 60 x per-minute: taken as given', async () => {
    const account = await newAccount(billing);
    const r = await run(['keys', 'create', '--account', account, '--per-minute', '10', '--per-hour', '5000']);
    expect(r.status, r.stderr).toBe(0);
    expect(await verified(r.stdout)).toEqual({ per_minute: 10, per_hour: 5000 });
  });

  it('per-hour below 60 x per-minute is refused naming both flags, and no key is made', async () => {
    for (const args of [
      ['--per-minute', '2000', '--per-hour', '1000'],
      ['--per-hour', '1000'],
    ]) {
      const r = await run(['keys', 'create', '--account', 'A', ...args], { NATS_URL: 'nats://127.0.0.1:1' });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('--per-hour');
      expect(r.stderr).toContain('--per-minute');
      expect(r.stderr).not.toMatch(STACK);
    }
  });
});

describe('failures of the service or the network', () => {
  it('a refusal of the service is one line with its code, exit 1', async () => {
    const r = await run(['usage', '--account', '00000000-0000-4000-8000-000000000000']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('account_not_found');
    expect(r.stderr).not.toMatch(STACK);
  });

  it('NATS out of reach is one line, exit 1', async () => {
    const r = await run(['plans'], { NATS_URL: 'nats://127.0.0.1:1' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^drael-billing plans: /);
    expect(r.stderr).not.toMatch(STACK);
  });

  it('a command that works prints JSON and exits 0', async () => {
    const r = await run(['plans']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty('plans');
  });
});
