#!/usr/bin/env node
// drael-receipts: checks a run's receipts offline, against the platform's published keys (billing's:
// GET /v1/receipts/public-key, its `keys`), given with --public-key, or asked of billing itself on
// NATS with --key-from-billing (NATS_URL, DRAEL_NATS_PREFIX from the environment).
//   drael-receipts verify <receipts.json|-> (--public-key [<id>:]<hex> ... | --key-from-billing)
// <receipts.json> is what GET /v1/agents/runs/{id}/receipts answers. Exit 0: valid; 1: not valid; 2: usage.
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { billingCatalog } from '@drael/contracts';
import { parseEnv, natsSecurityEnv } from '@drael/config';
import { NatsRpcClient } from '@drael/nats-rpc';
import type { PublishedReceiptKey } from '@drael/receipts';
import { verifyReceipts, type ReceiptBundle } from '../receipts/receipt-verifier.js';

const USAGE = `usage: drael-receipts verify <receipts.json|-> (--public-key [<id>:]<64 hex> ... | --key-from-billing) [--json]
  <receipts.json|->        what GET /v1/agents/runs/{id}/receipts answers; - reads standard input (required)
  --public-key [ID:]HEX    a published Ed25519 public key, 64 hex digits (GET /v1/receipts/public-key:
                           each of its \`keys\`), with the key id receipts carry; repeat it for a run
                           signed across a key rotation. Without ID, the key checks every signature
  --key-from-billing       ask billing for its published keys over NATS instead (NATS_URL, default
                           nats://127.0.0.1:4222; DRAEL_NATS_PREFIX, default none); exactly one of
                           the two is required
  --json                   print the verification result as JSON (default: one line of text)
  -h, --help               this help
exit 0: valid (or --help); 1: not valid; 2: usage, unreadable file, or no key`;

/** The receipt keys billing publishes (billing.receipts.key.v1): the signing one and every one that still verifies. */
async function keysFromBilling(): Promise<PublishedReceiptKey[]> {
  const client = await NatsRpcClient.connect({
    servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: process.env.DRAEL_NATS_PREFIX ?? '',
    name: 'drael-receipts',
    security: parseEnv(natsSecurityEnv, process.env),
  });
  try {
    return (await client.request(billingCatalog.receiptKey, {})).keys;
  } finally {
    await client.close();
  }
}

const GIVEN_KEY = /^(?:([A-Za-z0-9_-]{1,32}):)?([0-9a-fA-F]{64})$/;

/**
 * The keys given on the command line. A key given without its id checks every signature, whatever
 * id it carries (the tool's use before key sets: one key, the platform's).
 */
function givenKeys(given: readonly string[], bundle: ReceiptBundle): PublishedReceiptKey[] {
  const named = [...(bundle.receipts as Array<{ key_id?: unknown }>), bundle.run_end as { key_id?: unknown } | null]
    .map((signed) => signed?.key_id)
    .filter((id): id is string => typeof id === 'string');
  return given.flatMap((value) => {
    const [, id, hex] = GIVEN_KEY.exec(value)!;
    return (id === undefined ? [...new Set(named)] : [id]).map((keyId) => ({ key_id: keyId, public_key: hex!.toLowerCase() }));
  });
}

export async function runCli(argv: string[], out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'public-key': { type: 'string', multiple: true }, 'key-from-billing': { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
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
  if (command !== 'verify' || !file || (given === undefined) === !fromBilling || (given !== undefined && !given.every((g) => GIVEN_KEY.test(g)))) {
    out(USAGE);
    return 2;
  }
  let bundle: ReceiptBundle;
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
  let keys: PublishedReceiptKey[];
  try {
    keys = given ? givenKeys(given, bundle) : await keysFromBilling();
  } catch (err) {
    out(`cannot get billing's receipt keys: ${(err as Error).message}`);
    return 2;
  }
  const result = verifyReceipts(bundle, keys);
  if (parsed.values.json) out(JSON.stringify(result));
  else if (result.valid) out(`valid: run ${bundle.run_id}, ${result.receipt_count} receipts, head ${result.receipt_head}`);
  else out(`NOT valid: run ${bundle.run_id}\n${result.problems.map((p) => `  - ${p}`).join('\n')}`);
  return result.valid ? 0 : 1;
}

// Run when executed (also through a node_modules/.bin symlink), not when imported by a test.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) process.exitCode = await runCli(process.argv.slice(2));
