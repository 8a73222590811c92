#!/usr/bin/env node
// drael-billing: operator CLI. Talks to the running billing service over NATS (the same subjects
// the gateway's admin API uses), so it works against any installation it can reach.
import { parseArgs } from 'node:util';
import { billingCatalog, TOOL_LEVELS, type ToolLevel } from '@drael/contracts';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';

const USAGE = `usage: drael-billing <command> [options]   (NATS_URL, DRAEL_NATS_PREFIX from the environment)
  accounts create --name NAME [--plan free|pro|team] [--extra-usage --daily-ceiling N]
  accounts extra-usage --account ID (--enable|--disable) --daily-ceiling N
  keys create --account ID [--tool-level ${TOOL_LEVELS.join('|')}] [--per-minute N] [--per-hour N] [--key-name NAME]
  keys revoke --account ID --key KEY_ID
  usage --account ID
  plans
  wallet --account ID
  wallet credit --account ID --amount-usd X
  wallet limits --account ID [--monthly-budget-usd X|none] [--steps-per-minute N]`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    plan: { type: 'string' },
    account: { type: 'string' },
    key: { type: 'string' },
    'key-name': { type: 'string' },
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
  },
});

function need(name: keyof typeof values): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) throw new Error(`--${name} is required`);
  return v;
}
// Agent money is integer micro-dollars on the wire.
const usdToMicros = (v: string): number => {
  const usd = Number(v);
  if (!Number.isFinite(usd) || usd < 0) throw new Error(`not an amount in USD: ${v}`);
  return Math.round(usd * 1_000_000);
};
const int = (v: string | boolean | undefined) => (typeof v === 'string' ? Number.parseInt(v, 10) : undefined);

const client = await NatsRpcClient.connect({
  servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  prefix: process.env.DRAEL_NATS_PREFIX ?? '',
  name: 'drael-billing-cli',
});
const print = (v: unknown) => process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
let code = 0;
try {
  const cmd = positionals.join(' ');
  if (cmd === 'accounts create') {
    const ceiling = int(values['daily-ceiling']);
    print(
      await client.request(billingCatalog.createAccount, {
        name: need('name'),
        plan: values.plan ?? 'free',
        ...(values['extra-usage'] ? { extra_usage: { enabled: true, daily_ceiling: ceiling ?? 0 } } : {}),
      }),
    );
  } else if (cmd === 'accounts extra-usage') {
    print(
      await client.request(billingCatalog.setExtraUsage, {
        account_id: need('account'),
        enabled: Boolean(values.enable) && !values.disable,
        daily_ceiling: int(values['daily-ceiling']) ?? 0,
      }),
    );
  } else if (cmd === 'keys create') {
    const perMinute = int(values['per-minute']);
    const perHour = int(values['per-hour']);
    const res = await client.request(billingCatalog.createKey, {
      account_id: need('account'),
      name: values['key-name'],
      tool_level: (values['tool-level'] ?? 'l3_shell') as ToolLevel,
      ...(perMinute || perHour ? { rate_limit: { per_minute: perMinute ?? 60, per_hour: perHour ?? 1000 } } : {}),
    });
    print(res);
    process.stderr.write('The key is shown once and is not stored: keep it now.\n');
  } else if (cmd === 'keys revoke') {
    print(await client.request(billingCatalog.revokeKey, { account_id: need('account'), key_id: need('key') }));
  } else if (cmd === 'usage') {
    print(await client.request(billingCatalog.usage, { account_id: need('account') }));
  } else if (cmd === 'wallet') {
    print(await client.request(billingCatalog.wallet, { account_id: need('account') }));
  } else if (cmd === 'wallet credit') {
    print(await client.request(billingCatalog.creditWallet, { account_id: need('account'), amount_micros: usdToMicros(need('amount-usd')) }));
  } else if (cmd === 'wallet limits') {
    const budget = values['monthly-budget-usd'];
    print(
      await client.request(billingCatalog.setAgentLimits, {
        account_id: need('account'),
        ...(budget === undefined ? {} : { monthly_budget_micros: budget === 'none' ? null : usdToMicros(budget) }),
        ...(values['steps-per-minute'] ? { agent_steps_per_minute: int(values['steps-per-minute']) } : {}),
      }),
    );
  } else if (cmd === 'plans') {
    print(await client.request(billingCatalog.listPlans, {}));
  } else {
    process.stderr.write(`${USAGE}\n`);
    code = 2;
  }
} catch (err) {
  process.stderr.write(`${isRpcError(err) ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err)}\n`);
  code = 1;
} finally {
  await client.close();
}
process.exit(code);
