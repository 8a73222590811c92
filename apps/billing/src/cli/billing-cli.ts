#!/usr/bin/env node
// drael-billing: operator CLI. Talks to the running billing service over NATS (the same subjects
// the gateway's admin API uses), so it works against any installation it can reach.
// Exit 0: done (or --help); 1: the service refused or could not be reached; 2: a usage mistake
// (unknown command or option, a bad number), reported before anything is sent.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { billingCatalog, derivedPerHour, KeyExpirySchema, perHourProblem, TOOL_LEVELS, type RpcEntry, type ToolLevel } from '@drael/contracts';
import { parseEnv, natsSecurityEnv } from '@drael/config';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';
import { integerFlag, joinDashValues, usdFlag, UsageError } from './cli-args.js';

const BIN = 'drael-billing';

// Upper bounds of what billing stores (INTEGER columns, and its own config ranges): a number past
// them is refused here, naming the flag, instead of reaching the database.
const MAX_PER_MINUTE = 1_000_000;
const MAX_PER_HOUR = 100_000_000;
const MAX_DAILY_CEILING = 1_000_000;
const MAX_STEPS_PER_MINUTE = 1_000_000;
const MAX_USD = 1_000_000; // billing.wallet.*: at most 10^12 micro-dollars
const DEFAULT_PER_MINUTE = 60;
const DEFAULT_TOOL_LEVEL: ToolLevel = 'l3_shell';

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  plan: { type: 'string' },
  account: { type: 'string' },
  key: { type: 'string' },
  'key-name': { type: 'string' },
  'expires-at': { type: 'string' },
  'tool-level': { type: 'string' },
  'per-minute': { type: 'string' },
  'per-hour': { type: 'string' },
  'extra-usage': { type: 'boolean' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  'daily-ceiling': { type: 'string' },
  'amount-usd': { type: 'string' },
  'monthly-budget-usd': { type: 'string' },
  'steps-per-minute': { type: 'string' },
} as const;
type OptionName = keyof typeof OPTIONS;
type Values = Partial<Record<OptionName, string | boolean>>;
const STRING_OPTIONS = new Set(
  Object.entries(OPTIONS)
    .filter(([, o]) => o.type === 'string')
    .map(([k]) => k),
);

/** What a command sends: one request on one subject, and a note for the operator afterwards. */
interface Call {
  entry: RpcEntry;
  payload: unknown;
  note?: string;
}

interface Command {
  /** The positionals that name it: 'keys create'. */
  name: string;
  summary: string;
  /** One line per option, each with its default or "required". */
  options: [OptionName, string][];
  build(v: Values): Call;
}

const COMMANDS: Command[] = [
  {
    name: 'accounts create',
    summary: 'create an account (prints its account_id)',
    options: [
      ['name', 'NAME          account name (required)'],
      ['plan', 'PLAN          plan id, see `plans` (default: free)'],
      ['extra-usage', '               allow extra usage past the weekly allowance (default: off)'],
      ['daily-ceiling', 'N    extra uses a day, 1-1,000,000 (required with --extra-usage)'],
    ],
    build: (v) => {
      if (v['daily-ceiling'] !== undefined && !v['extra-usage']) throw new UsageError('--daily-ceiling needs --extra-usage', 'accounts create');
      return {
        entry: billingCatalog.createAccount,
        payload: {
          name: required(v, 'name'),
          plan: str(v, 'plan') ?? 'free',
          ...(v['extra-usage'] ? { extra_usage: { enabled: true, daily_ceiling: dailyCeiling(v, 'accounts create') } } : {}),
        },
      };
    },
  },
  {
    name: 'accounts extra-usage',
    summary: 'turn extra usage on or off',
    options: [
      ['account', 'ID         account id (required)'],
      ['enable', '               turn it on (one of --enable / --disable is required)'],
      ['disable', '              turn it off (one of --enable / --disable is required)'],
      ['daily-ceiling', 'N    extra uses a day, 1-1,000,000 (required with --enable; with --disable default: 0)'],
    ],
    build: (v) => {
      if (Boolean(v.enable) === Boolean(v.disable)) throw new UsageError('give exactly one of --enable and --disable', 'accounts extra-usage');
      const enabled = v.enable === true;
      return {
        entry: billingCatalog.setExtraUsage,
        payload: {
          account_id: required(v, 'account'),
          enabled,
          daily_ceiling: enabled || v['daily-ceiling'] !== undefined ? dailyCeiling(v, 'accounts extra-usage') : 0,
        },
      };
    },
  },
  {
    name: 'keys create',
    summary: 'create an API key (printed once, never stored)',
    options: [
      ['account', 'ID         account id (required)'],
      ['tool-level', `L       ${TOOL_LEVELS.join('|')} (default: ${DEFAULT_TOOL_LEVEL})`],
      ['per-minute', `N       requests a minute, 1-${MAX_PER_MINUTE.toLocaleString('en')} (default: ${DEFAULT_PER_MINUTE})`],
      ['per-hour', `N         requests an hour, up to ${MAX_PER_HOUR.toLocaleString('en')} (default: 60 x --per-minute; never less than that: a smaller one is refused)`],
      ['key-name', 'NAME       a label for the key (default: none)'],
      ['expires-at', 'TIME    when the key stops working, RFC 3339 (e.g. 2027-01-31T00:00:00Z; default: never)'],
    ],
    build: (v) => {
      const toolLevel = str(v, 'tool-level') ?? DEFAULT_TOOL_LEVEL;
      if (!(TOOL_LEVELS as readonly string[]).includes(toolLevel)) {
        throw new UsageError(`--tool-level must be one of ${TOOL_LEVELS.join(', ')} (got ${JSON.stringify(toolLevel)})`, 'keys create');
      }
      const keyName = str(v, 'key-name');
      const expiresAt = str(v, 'expires-at');
      if (expiresAt !== undefined && !KeyExpirySchema.safeParse(expiresAt).success) {
        throw new UsageError(`--expires-at must be an RFC 3339 time with Z or an offset, e.g. 2027-01-31T00:00:00Z (got ${JSON.stringify(expiresAt)})`, 'keys create');
      }
      return {
        entry: billingCatalog.createKey,
        payload: {
          account_id: required(v, 'account'),
          tool_level: toolLevel,
          rate_limit: keyRateLimit(v),
          ...(keyName !== undefined ? { name: keyName } : {}),
          ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
        },
        note: 'The key is shown once and is not stored: keep it now.',
      };
    },
  },
  {
    name: 'keys revoke',
    summary: 'revoke an API key (every gateway refuses it from its next request on)',
    options: [
      ['account', 'ID         account id (required)'],
      ['key', 'KEY_ID         key id (required)'],
    ],
    build: (v) => ({ entry: billingCatalog.revokeKey, payload: { account_id: required(v, 'account'), key_id: required(v, 'key') } }),
  },
  {
    name: 'usage',
    summary: "an account's usage this week, extra usage and agent spend",
    options: [['account', 'ID         account id (required)']],
    build: (v) => ({ entry: billingCatalog.usage, payload: { account_id: required(v, 'account') } }),
  },
  {
    name: 'plans',
    summary: 'the plans and their weekly allowances',
    options: [],
    build: () => ({ entry: billingCatalog.listPlans, payload: {} }),
  },
  {
    name: 'wallet',
    summary: "an account's agent wallet: balance, holds, budget, step rate",
    options: [['account', 'ID         account id (required)']],
    build: (v) => ({ entry: billingCatalog.wallet, payload: { account_id: required(v, 'account') } }),
  },
  {
    name: 'wallet credit',
    summary: "add prepaid credit to an account's agent wallet",
    options: [
      ['account', 'ID         account id (required)'],
      ['amount-usd', `X       USD to add, more than 0 and up to ${MAX_USD.toLocaleString('en')}, at most 6 decimals (required)`],
    ],
    build: (v) => ({
      entry: billingCatalog.creditWallet,
      payload: { account_id: required(v, 'account'), amount_micros: usdFlag('amount-usd', required(v, 'amount-usd'), 0.000001, MAX_USD) },
    }),
  },
  {
    name: 'wallet limits',
    summary: "set an account's monthly agent budget and step rate (a flag left out keeps its value)",
    options: [
      ['account', 'ID         account id (required)'],
      ['monthly-budget-usd', `X|none   monthly budget in USD, up to ${MAX_USD.toLocaleString('en')}; 0 stops agent spending; none removes the cap (default: unchanged)`],
      ['steps-per-minute', `N   agent steps a minute, 1-${MAX_STEPS_PER_MINUTE.toLocaleString('en')} (default: unchanged; a new account has 120)`],
    ],
    build: (v) => {
      const budget = str(v, 'monthly-budget-usd');
      const steps = str(v, 'steps-per-minute');
      if (budget === undefined && steps === undefined) throw new UsageError('give --monthly-budget-usd or --steps-per-minute (or both)', 'wallet limits');
      return {
        entry: billingCatalog.setAgentLimits,
        payload: {
          account_id: required(v, 'account'),
          ...(budget === undefined ? {} : { monthly_budget_micros: budget === 'none' ? null : usdFlag('monthly-budget-usd', budget, 0, MAX_USD) }),
          ...(steps === undefined ? {} : { agent_steps_per_minute: integerFlag('steps-per-minute', steps, 1, MAX_STEPS_PER_MINUTE) }),
        },
      };
    },
  },
];

/**
 * A key's limits. The per-hour limit is never below 60 x the per-minute one: that would cap the
 * key below its own per-minute rate without saying so (--per-minute 2000 once meant 1,000 an hour).
 * Left out, it is derived (60 x per-minute); given smaller, it is refused naming both flags.
 */
export function keyRateLimit(v: Values): { per_minute: number; per_hour: number } {
  const perMinute = v['per-minute'] === undefined ? DEFAULT_PER_MINUTE : integerFlag('per-minute', String(v['per-minute']), 1, MAX_PER_MINUTE);
  if (v['per-hour'] === undefined) return { per_minute: perMinute, per_hour: derivedPerHour(perMinute) };
  const perHour = integerFlag('per-hour', String(v['per-hour']), 1, MAX_PER_HOUR);
  // The admin API's rule (contracts perHourProblem), said in the CLI's own flag names.
  if (perHourProblem(perMinute, perHour)) {
    throw new UsageError(
      `--per-hour ${perHour} is below 60 x --per-minute ${perMinute} (= ${derivedPerHour(perMinute)}): the key could never use its per-minute rate; ` +
        `raise --per-hour or lower --per-minute${v['per-minute'] === undefined ? ` (default ${DEFAULT_PER_MINUTE})` : ''}`,
      'keys create',
    );
  }
  return { per_minute: perMinute, per_hour: perHour };
}

function str(v: Values, name: OptionName): string | undefined {
  const value = v[name];
  return typeof value === 'string' ? value : undefined;
}

function required(v: Values, name: OptionName): string {
  const value = str(v, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function dailyCeiling(v: Values, command: string): number {
  const value = str(v, 'daily-ceiling');
  if (value === undefined) throw new UsageError('--daily-ceiling is required with extra usage on', command);
  return integerFlag('daily-ceiling', value, 1, MAX_DAILY_CEILING);
}

function commandUsage(c: Command): string {
  const lines = [`usage: ${BIN} ${c.name}${c.options.length ? ' [options]' : ''}`, `  ${c.summary}`];
  for (const [flag, text] of c.options) {
    // "META  description" or, for a switch, just the description.
    const [, meta, description] = /^(\S*)\s*(.*)$/.exec(text) ?? ['', '', text];
    lines.push(`  ${`--${flag}${meta ? ` ${meta}` : ''}`.padEnd(30)} ${description}`);
  }
  lines.push(`  ${'-h, --help'.padEnd(30)} this help`);
  return lines.join('\n');
}

function overview(group?: string): string {
  const shown = COMMANDS.filter((c) => !group || c.name === group || c.name.startsWith(`${group} `));
  return [
    `usage: ${BIN} ${group ? `${group} <subcommand>` : '<command>'} [options]`,
    '  NATS_URL (default: nats://127.0.0.1:4222) and DRAEL_NATS_PREFIX (default: none) from the environment.',
    `  \`${BIN} <command> --help\` shows a command's options and their defaults.`,
    '',
    'commands:',
    ...shown.map((c) => `  ${c.name.padEnd(22)} ${c.summary}`),
  ].join('\n');
}

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

/** Runs one command line; returns the exit code. Nothing is sent until the whole line is valid. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: joinDashValues(argv, STRING_OPTIONS), options: OPTIONS, allowPositionals: true, strict: true }));
  } catch (err) {
    // parseArgs names the option (unknown option, missing value); the overview says what there is.
    io.err(`${BIN}: ${(err as Error).message}\n\n${overview()}`);
    return 2;
  }
  const words = positionals[0] === 'help' ? positionals.slice(1) : positionals;
  const wantsHelp = values.help === true || positionals[0] === 'help';
  const name = words.join(' ');
  const command = COMMANDS.find((c) => c.name === name);
  const isGroup = name !== '' && COMMANDS.some((c) => c.name.startsWith(`${name} `));

  if (wantsHelp) {
    if (command) io.out(`${commandUsage(command)}${isGroup ? `\n\n${overview(name)}` : ''}`);
    else if (name === '' || isGroup) io.out(overview(name || undefined));
    else {
      io.err(`${BIN}: unknown command ${JSON.stringify(name)}\n\n${overview()}`);
      return 2;
    }
    return 0;
  }
  if (!command) {
    io.err(
      `${BIN}: ${name === '' ? 'no command given' : isGroup ? `${JSON.stringify(name)} needs a subcommand` : `unknown command ${JSON.stringify(name)}`}\n\n${overview(isGroup ? name : undefined)}`,
    );
    return 2;
  }

  let call: Call;
  try {
    const allowed = new Set<string>(['help', ...command.options.map(([flag]) => flag)]);
    const stray = Object.keys(values).find((k) => !allowed.has(k));
    if (stray) throw new UsageError(`--${stray} is not an option of \`${command.name}\``);
    call = command.build(values);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`${BIN} ${command.name}: ${err.message}\n\n${commandUsage(command)}`);
    return 2;
  }

  let client: NatsRpcClient | undefined;
  try {
    client = await NatsRpcClient.connect({
      servers: io.env.NATS_URL ?? 'nats://127.0.0.1:4222',
      prefix: io.env.DRAEL_NATS_PREFIX ?? '',
      name: 'drael-billing-cli',
      security: parseEnv(natsSecurityEnv, io.env),
    });
    io.out(JSON.stringify(await client.request(call.entry, call.payload), null, 2));
    if (call.note) io.err(call.note);
    return 0;
  } catch (err) {
    io.err(`${BIN} ${command.name}: ${isRpcError(err) ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err)}`);
    // The service's bad_request is a mistake in the command line too.
    return isRpcError(err) && err.code === 'bad_request' ? 2 : 1;
  } finally {
    await client?.close().catch(() => undefined);
  }
}

// Run when executed (also through a symlink), not when imported by a test.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const io: CliIo = { out: (t) => process.stdout.write(`${t}\n`), err: (t) => process.stderr.write(`${t}\n`), env: process.env };
  runCli(process.argv.slice(2), io).then(
    (code) => process.exit(code),
    (err: unknown) => {
      // Nothing above should throw; if it does, one line and no stack trace.
      process.stderr.write(`${BIN}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
