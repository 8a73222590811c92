#!/usr/bin/env node
// drael-receipts: checks a run's receipts offline, against the platform's public key (billing's:
// GET /v1/receipts/public-key), or against the key billing itself answers on NATS with --key-from-billing
// (NATS_URL, DRAEL_NATS_PREFIX from the environment).
//   drael-receipts verify <receipts.json|-> (--public-key <hex> | --key-from-billing)
// <receipts.json> is what GET /v1/agents/runs/{id}/receipts answers. Exit 0: valid; 1: not valid; 2: usage.
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { billingCatalog } from '@drael/contracts';
import { parseEnv, natsSecurityEnv } from '@drael/config';
import { NatsRpcClient } from '@drael/nats-rpc';
import { verifyReceipts, type ReceiptBundle } from '../receipts/receipt-verifier.js';

const USAGE = `usage: drael-receipts verify <receipts.json|-> (--public-key <64 hex> | --key-from-billing) [--json]
  <receipts.json|->        what GET /v1/agents/runs/{id}/receipts answers; - reads standard input (required)
  --public-key HEX         billing's Ed25519 public key, 64 hex digits (GET /v1/receipts/public-key)
  --key-from-billing       ask billing for it over NATS instead (NATS_URL, default nats://127.0.0.1:4222;
                           DRAEL_NATS_PREFIX, default none); exactly one of the two is required
  --json                   print the verification result as JSON (default: one line of text)
  -h, --help               this help
exit 0: valid (or --help); 1: not valid; 2: usage, unreadable file, or no key`;

/** The receipt key billing answers with (billing.receipts.key.v1): the one that signs receipts and run ends. */
async function keyFromBilling(): Promise<string> {
  const client = await NatsRpcClient.connect({
    servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: process.env.DRAEL_NATS_PREFIX ?? '',
    name: 'drael-receipts',
    security: parseEnv(natsSecurityEnv, process.env),
  });
  try {
    return (await client.request(billingCatalog.receiptKey, {})).public_key;
  } finally {
    await client.close();
  }
}

export async function runCli(argv: string[], out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'public-key': { type: 'string' }, 'key-from-billing': { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    out(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help || parsed.positionals[0] === 'help') {
    out(USAGE);
    return 0;
  }
  const [command, file] = parsed.positionals;
  const given = parsed.values['public-key'];
  const fromBilling = parsed.values['key-from-billing'] === true;
  if (command !== 'verify' || !file || (given === undefined) === !fromBilling || (given !== undefined && !/^[0-9a-f]{64}$/i.test(given))) {
    out(USAGE);
    return 2;
  }
  let bundle: ReceiptBundle & { public_key?: string };
  try {
    bundle = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')) as ReceiptBundle;
  } catch (err) {
    out(`cannot read ${file}: ${(err as Error).message}`);
    return 2;
  }
  if (typeof bundle.run_id !== 'string' || !Array.isArray(bundle.receipts)) {
    out(`${file}: expected {"run_id", "receipts": [...], "run_end"}`);
    return 2;
  }
  let publicKey: string;
  try {
    publicKey = given ?? (await keyFromBilling());
  } catch (err) {
    out(`cannot get billing's receipt key: ${(err as Error).message}`);
    return 2;
  }
  const result = verifyReceipts(bundle, publicKey.toLowerCase());
  if (parsed.values.json) out(JSON.stringify(result));
  else if (result.valid) out(`valid: run ${bundle.run_id}, ${result.receipt_count} receipts, head ${result.receipt_head}`);
  else out(`NOT valid: run ${bundle.run_id}\n${result.problems.map((p) => `  - ${p}`).join('\n')}`);
  return result.valid ? 0 : 1;
}

// Run when executed (also through a node_modules/.bin symlink), not when imported by a test.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) process.exitCode = await runCli(process.argv.slice(2));
