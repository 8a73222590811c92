#!/usr/bin/env node
// Chaos harness (issue 19, item 5): README.md says what it does and what its figures were.
// Starts its own NATS (JetStream) and Redis, 3 replicas of every service and 2 gateways
// (stack.mjs), drives the mix through the gateways (drivers.mjs) while it SIGKILLs one
// replica of each service and one gateway and restarts NATS and Redis (disruptions.mjs), then
// checks every request, hold, charge, run and session (checks.mjs). Loopback only; bounded in time
// (--seconds, plus boot and the checks' bounded waits) and count (--clients drivers).
// Usage: node bench/chaos/run.mjs [--seconds 90] [--clients 8] [--records FILE]
import { stopOnSignal } from '../lib/ends-with-bench.mjs';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { checkCharges, checkEndings, checkHolds, checkRuns, checkSessions, checkWaits, undisturbedDurations } from './checks.mjs';
import { disrupt } from './disruptions.mjs';
import { startDrivers } from './drivers.mjs';
import { startStack } from './stack.mjs';
import { numberOption, option } from '../lib/cli-options.mjs';

const SECONDS = numberOption('seconds', 90);
const CLIENTS = numberOption('clients', 8);
// --records FILE: every request's record and every disruption, as JSON, for reading a failed check
// after the run (which request, on which gateway, when against which disruption, what it saw).
const RECORDS_FILE = option('records', null);

let t0 = Date.now();
const log = (msg, extra = {}) => process.stdout.write(`${JSON.stringify({ t: Number(((Date.now() - t0) / 1000).toFixed(1)), msg, ...extra })}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');

const cleanups = [];
// Run once, at the end or on SIGINT / SIGTERM (ends-with-bench.mjs).
const cleanup = stopOnSignal(async () => {
  for (const c of cleanups.reverse()) await c().catch((err) => log('cleanup step failed', { error: String(err?.message ?? err).slice(0, 200) }));
});

async function main() {
  const loadAtStart = load();
  const stack = await startStack({ log, cleanups, drivers: CLIENTS });
  const loadAtDrive = load();
  t0 = Date.now();
  log('driving', { seconds: SECONDS, clients: CLIENTS, load: loadAtDrive });
  const drivers = startDrivers({ accounts: stack.accounts, gateways: stack.gateways, pages: stack.pages });
  const events = await disrupt(stack, SECONDS, log);
  stack.events = events;
  await new Promise((r) => setTimeout(r, Math.max(0, t0 + SECONDS * 1000 - Date.now())));
  const requests = await drivers.stop();
  const driveEndedAt = Date.now();
  log('drive over, checking', { requests: requests.length });

  const survivor = stack.gateways.find((g) => g.alive);
  const checks = {
    endings: checkEndings(requests, events),
    waits: checkWaits(requests, events),
    sessions: await checkSessions(stack, requests, survivor),
    runs: await checkRuns(stack, requests, survivor),
    holds: await checkHolds(stack, driveEndedAt),
    charges: await checkCharges(stack, requests, events),
  };
  const clean = Object.values(checks).every((c) => c.ok);
  const summary = {
    seconds: SECONDS,
    clients: CLIENTS,
    load_avg_at_start: loadAtStart,
    load_avg_at_drive: loadAtDrive,
    load_avg_at_end: load(),
    disruptions: events,
    undisturbed_durations: undisturbedDurations(requests, events),
    failed_checks: Object.entries(checks)
      .filter(([, c]) => !c.ok)
      .map(([k]) => k),
    ...checks,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (RECORDS_FILE) {
    // The replicas' own output too (CHAOS_LOG_LEVEL=info makes it say what each replica did).
    const outputs = Object.fromEntries(
      Object.values(stack.replicas)
        .flat()
        .map((r) => [r.name, r.output?.() ?? '']),
    );
    await writeFile(RECORDS_FILE, JSON.stringify({ t0, events, requests, outputs }));
  }
  log(clean ? 'CLEAN' : 'NOT CLEAN');
  return clean;
}

main()
  .then(async (clean) => {
    await cleanup();
    process.exit(clean ? 0 : 1);
  })
  .catch(async (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    await cleanup();
    process.exit(2);
  });
