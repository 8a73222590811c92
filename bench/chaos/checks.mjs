// The after-the-run checks (issue 19, item 5). Each returns { ok, ...figures }; run.mjs prints them
// and the run is clean only when every one is ok.
import { resolve } from 'node:path';
import { SWEEP_INTERVAL_MS, TOOL_HOLD_TTL_S } from './stack.mjs';

const root = resolve(import.meta.dirname, '../..');
// The verifier `drael-receipts` runs (apps/agent-run/src/receipts): the one definition of a valid chain.
const { verifyReceipts } = await import(resolve(root, 'apps/agent-run/dist/receipts/receipt-verifier.js'));
const { TERMINAL_RUN_STATUSES } = await import(resolve(root, 'packages/contracts/dist/index.js'));

// The issue's bound: nobody waits more than this after a disruption.
export const WAIT_BOUND_MS = 10_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Every request ended, with a success or a typed error. A transport error (reset, refused) is an
 * ending only for a request that was on the gateway when it was killed.
 */
export function checkEndings(requests, events) {
  const gwKill = events.find((e) => e.gateway);
  const transportOk = (r) => gwKill && r.gw === gwKill.gateway && r.start <= gwKill.at + 1_000;
  const count = (pred) => requests.filter(pred).length;
  const outcomes = {};
  for (const r of requests) {
    const k = `${r.kind} ${r.outcome}${r.status ? ` ${r.status}` : ''}${r.code ? ` ${r.code}` : ''}`;
    outcomes[k] = (outcomes[k] ?? 0) + 1;
  }
  const figures = {
    requests: requests.length,
    still_open: count((r) => r.end === 0),
    hung_60s: count((r) => r.outcome === 'hung'),
    untyped: count((r) => r.outcome === 'untyped'),
    truncated_streams: count((r) => r.outcome === 'truncated'),
    transport_errors_on_killed_gateway: count((r) => r.outcome === 'transport' && transportOk(r)),
    transport_errors_elsewhere: count((r) => r.outcome === 'transport' && !transportOk(r)),
    outcomes,
  };
  const ok = figures.still_open === 0 && figures.hung_60s === 0 && figures.untyped === 0 && figures.truncated_streams === 0 && figures.transport_errors_elsewhere === 0;
  return { ok, ...figures };
}

// Requests sent this soon after a disruption ended count as caught in it (a request sent just as
// NATS came back may still have gone down with it).
const AFTERMATH_MS = 2_000;

/**
 * For each disruption, the longest any request waited after it: requests in flight when it began,
 * and those sent while it lasted (a NATS restart takes a second) or just after.
 */
export function checkWaits(requests, events) {
  const per = events.map((e) => {
    const touched = requests.filter((r) => r.start <= e.at + e.took_ms + AFTERMATH_MS && (r.end === 0 || r.end >= e.at));
    const waited = (r) => (r.end || Date.now()) - Math.max(r.start, e.at);
    const worst = touched.reduce((a, r) => (a && waited(a) >= waited(r) ? a : r), undefined);
    const longest = worst ? waited(worst) : 0;
    return {
      event: e.what,
      requests_caught: touched.length,
      longest_wait_ms: longest,
      longest_was: worst && `${worst.kind} ${worst.outcome} ${worst.code ?? ''}`.trim(),
      // What its tools did (ok, or the error the model was told): where the time went.
      longest_tools: worst?.tools.map(toolOutcome),
      longest_started_ms_after: worst && worst.start - e.at,
    };
  });
  const longest = Math.max(0, ...per.map((p) => p.longest_wait_ms));
  return { ok: longest <= WAIT_BOUND_MS, longest_wait_after_a_disruption_ms: longest, per_disruption: per };
}

/** A tool frame as `tool:ok` or `tool:<error code>`. */
function toolOutcome(t) {
  if (t.ok) return `${t.tool}:ok`;
  const code = /"(?:code|error)"\s*:\s*"([^"]+)"/.exec(typeof t.result === 'string' ? t.result : JSON.stringify(t.result ?? ''))?.[1];
  return `${t.tool}:${code ?? 'error'}`;
}

/**
 * How long each kind of request takes when nothing is being disrupted (sent more than 2 s after
 * the last disruption ended and finished before the next began): the machine's own pace, to read
 * the waits after disruptions against.
 */
export function undisturbedDurations(requests, events) {
  const calm = (r) => r.end > 0 && events.every((e) => r.end < e.at || r.start > e.at + e.took_ms + AFTERMATH_MS);
  const out = {};
  for (const kind of [...new Set(requests.map((r) => r.kind))]) {
    const d = requests
      .filter((r) => r.kind === kind && calm(r))
      .map((r) => r.end - r.start)
      .sort((a, b) => a - b);
    if (d.length) out[kind] = { n: d.length, p50_ms: d[Math.floor(d.length / 2)], max_ms: d.at(-1) };
  }
  return out;
}

/** Every hold of the run's accounts resolved once the sweeper's window passed: none still `held`. */
export async function checkHolds(stack, driveEndedAt) {
  const accounts = stack.accounts.map((a) => a.account_id);
  // The last hold was taken before the drive ended: past its ttl and two sweeps, it must be resolved.
  await sleep(Math.max(0, driveEndedAt + TOOL_HOLD_TTL_S * 1000 + 2 * SWEEP_INTERVAL_MS - Date.now()));
  const { rows } = await stack.billingDb.query('SELECT status::text AS status, count(*)::int AS n FROM holds WHERE account_id = ANY($1::uuid[]) GROUP BY 1', [accounts]);
  const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
  const spend = await stack.billingDb.query(
    `SELECT status::text AS status, count(*)::int AS n, count(*) FILTER (WHERE expires_at < now())::int AS past_expiry FROM spend_holds WHERE account_id = ANY($1::uuid[]) GROUP BY 1`,
    [accounts],
  );
  const spendByStatus = Object.fromEntries(spend.rows.map((r) => [r.status, r.n]));
  const spendOpenPastExpiry = spend.rows.find((r) => r.status === 'held')?.past_expiry ?? 0;
  // A run that ended holds no money (billing releases its open reservations when it signs the run end).
  const { rows: finalRuns } = await stack.agentDb.query('SELECT id FROM runs WHERE account_id = ANY($1) AND status::text = ANY($2)', [accounts, TERMINAL_RUN_STATUSES]);
  const { rows: openOfFinal } = await stack.billingDb.query(
    `SELECT count(*)::int AS n FROM spend_holds WHERE account_id = ANY($1::uuid[]) AND status = 'held' AND run_id = ANY($2)`,
    [accounts, finalRuns.map((r) => r.id)],
  );
  const spendOpenOfFinalRuns = openOfFinal[0].n;
  return {
    ok: (byStatus.held ?? 0) === 0 && spendOpenPastExpiry === 0 && spendOpenOfFinalRuns === 0,
    spend_holds_open_of_final_runs: spendOpenOfFinalRuns,
    tool_holds: byStatus,
    tool_holds_open: byStatus.held ?? 0,
    spend_holds: spendByStatus,
    spend_holds_open_past_expiry: spendOpenPastExpiry,
  };
}

/**
 * The paid calls' money: per request, the units billing settled (holds keyed `<request id>:<call>`)
 * against the units the client saw charged (tool frames of breach_lookup with ok: one unit each).
 * A charge the client could not see is allowed only where its connection was cut (killed gateway);
 * a charge above what the client saw anywhere else is a double charge. And the week's `used`
 * counters equal the settled holds (the ledger agrees with itself).
 */
export async function checkCharges(stack, requests, events) {
  const accounts = stack.accounts.map((a) => a.account_id);
  const { rows } = await stack.billingDb.query(
    `SELECT idempotency_key, status::text AS status, coalesce(settled_units, 0)::int AS units FROM holds WHERE account_id = ANY($1::uuid[])`,
    [accounts],
  );
  const ledgerOf = new Map();
  for (const h of rows) {
    const requestId = h.idempotency_key.split(':')[0];
    const e = ledgerOf.get(requestId) ?? { settled: 0, holds: 0 };
    e.holds++;
    if (h.status === 'settled') e.settled += h.units;
    ledgerOf.set(requestId, e);
  }
  const byId = new Map(requests.map((r) => [r.requestId, r]));
  let seen = 0;
  let ledger = 0;
  let overcharged = 0;
  let chargedUnseenCut = 0;
  let seenNotCharged = 0;
  const mismatches = [];
  const unknownHolds = [...ledgerOf.keys()].filter((id) => !byId.has(id)).length;
  for (const r of requests) {
    const s = r.tools.filter((t) => t.tool === 'breach_lookup' && t.ok).length;
    const l = ledgerOf.get(r.requestId)?.settled ?? 0;
    seen += s;
    ledger += l;
    if (l > s) {
      if (r.outcome === 'transport') chargedUnseenCut += l - s;
      else overcharged += l - s;
    }
    if (s > l) {
      seenNotCharged += s - l;
      mismatches.push(r);
    }
    if (l > s && r.outcome !== 'transport') mismatches.push(r);
  }
  const used = await stack.billingDb.query(`SELECT coalesce(sum(used), 0)::int AS used FROM weekly_allowances WHERE account_id = ANY($1::uuid[]) AND meter = 'lookups'`, [
    accounts,
  ]);
  const extra = await stack.billingDb.query(`SELECT coalesce(sum(used), 0)::int AS used FROM daily_extras WHERE account_id = ANY($1::uuid[])`, [accounts]);
  const counters = used.rows[0].used + extra.rows[0].used;
  return {
    ok: overcharged === 0 && unknownHolds === 0 && counters === ledger && seenNotCharged === 0,
    charges_seen_by_clients: seen,
    ledger_settled_units: ledger,
    ledger_used_counters: counters,
    overcharged_units: overcharged,
    charged_where_the_connection_was_cut: chargedUnseenCut,
    seen_but_not_charged: seenNotCharged,
    holds_of_no_request: unknownHolds,
    // To trace a mismatch: the request, when it ran, and the disruption nearest its start.
    mismatched_requests: mismatches.slice(0, 5).map((r) => describe(r, events)),
  };
}

/** A request placed in time against the disruptions, for the report. */
function describe(r, events) {
  const nearest = events.reduce((a, e) => (a && Math.abs(a.at - r.start) <= Math.abs(e.at - r.start) ? a : e), undefined);
  return { request_id: r.requestId, kind: r.kind, gw: r.gw, outcome: r.outcome, ms: r.end - r.start, nearest: nearest && `${nearest.what} (${r.start - nearest.at} ms after)` };
}

async function getJson(gw, account, path) {
  for (let i = 0; ; i++) {
    const r = await fetch(`${gw.url}${path}`, { headers: account.headers, signal: AbortSignal.timeout(15_000) }).catch((err) => ({ status: 0, err }));
    if (r.status === 200) return r;
    if (i >= 40) throw new Error(`GET ${path}: ${r.status} ${r.err?.message ?? (await r.text())}`);
    await sleep(500);
  }
}

/**
 * Every run the clients created (and every run of their accounts) reached a final status, was
 * claimed by exactly one worker (one `running` status event), and its receipt chain verifies
 * against billing's public key; the money its receipts state is what billing settled for it.
 */
export async function checkRuns(stack, requests, gw, waitMs = 120_000) {
  const accounts = stack.accounts.map((a) => a.account_id);
  const created = requests.filter((r) => r.runId).map((r) => r.runId);
  const deadline = Date.now() + waitMs;
  let runs;
  for (;;) {
    ({ rows: runs } = await stack.agentDb.query('SELECT id, account_id, status::text AS status, error_code FROM runs WHERE account_id = ANY($1)', [accounts]));
    if (runs.every((r) => TERMINAL_RUN_STATUSES.includes(r.status)) || Date.now() > deadline) break;
    await sleep(1_000);
  }
  const { rows: claims } = await stack.agentDb.query(
    `SELECT run_id, count(*)::int AS n FROM run_events WHERE type = 'run.status' AND data->>'status' = 'running' AND run_id = ANY($1) GROUP BY 1`,
    [runs.map((r) => r.id)],
  );
  const claimsOf = new Map(claims.map((c) => [c.run_id, c.n]));
  const account = (id) => stack.accounts.find((a) => a.account_id === id);
  const publicKey = (await (await getJson(gw, stack.accounts[0], '/v1/receipts/public-key')).json()).public_key;
  const { rows: spend } = await stack.billingDb.query(
    `SELECT run_id, coalesce(sum(settled_micros), 0)::bigint AS micros FROM spend_holds WHERE account_id = ANY($1::uuid[]) AND status = 'settled' GROUP BY 1`,
    [accounts],
  );
  const settledOf = new Map(spend.map((s) => [s.run_id, Number(s.micros)]));
  let invalid = 0;
  let moneyMismatch = 0;
  let chargedWithoutReceipt = 0;
  const problems = [];
  for (const run of runs) {
    const bundle = await (await getJson(gw, account(run.account_id), `/v1/runs/${run.id}/receipts`)).json();
    const v = verifyReceipts(bundle, publicKey);
    if (!v.valid) {
      invalid++;
      problems.push({ run: run.id, status: run.status, problems: v.problems.slice(0, 3) });
    }
    const stated = bundle.receipts.reduce((sum, r) => sum + r.payload.cost_micros, 0);
    const settled = settledOf.get(run.id) ?? 0;
    if (stated !== settled) {
      // A worker killed between billing's settle (which issues the receipt) and its own write of
      // the step: the account paid for a step whose receipt the run never got.
      if (settled > stated && run.error_code === 'worker_lost') chargedWithoutReceipt += settled - stated;
      else moneyMismatch++;
      problems.push({ run: run.id, status: `${run.status} ${run.error_code ?? ''}`.trim(), receipts_state_micros: stated, billing_settled_micros: settled });
    }
  }
  const statuses = {};
  for (const r of runs) {
    const k = r.error_code ? `${r.status} ${r.error_code}` : r.status;
    statuses[k] = (statuses[k] ?? 0) + 1;
  }
  const ids = new Set(runs.map((r) => r.id));
  const figures = {
    runs: runs.length,
    created_by_clients: created.length,
    created_but_missing: created.filter((id) => !ids.has(id)).length,
    not_final: runs.filter((r) => !TERMINAL_RUN_STATUSES.includes(r.status)).length,
    claimed_more_than_once: runs.filter((r) => (claimsOf.get(r.id) ?? 0) > 1).length,
    receipt_chains_invalid: invalid,
    receipts_vs_billing_mismatch: moneyMismatch,
    micros_charged_without_a_receipt: chargedWithoutReceipt,
    statuses,
    problems: problems.slice(0, 5),
  };
  const ok =
    figures.created_but_missing === 0 && figures.not_final === 0 && figures.claimed_more_than_once === 0 && invalid === 0 && moneyMismatch === 0 && chargedWithoutReceipt === 0;
  return { ok, ...figures };
}

/**
 * Every session's files written by runs that completed (the client saw run_code ok with the run's
 * `ran <n>`) are there, read through the surviving gateway from whichever replica serves the
 * session now: log.txt holds each run's line, and each run's f<n>.txt is listed.
 */
export async function checkSessions(stack, requests, gw) {
  let expected = 0;
  let missing = 0;
  const lost = [];
  for (const account of stack.accounts) {
    const done = requests
      .filter((r) => r.driver === stack.accounts.indexOf(account) && r.kind === 'chat_run_code')
      .filter((r) => r.tools.some((t) => t.tool === 'run_code' && t.ok && t.result.includes(`ran ${r.n}`)))
      .map((r) => r.n);
    if (done.length === 0) continue;
    expected += done.length;
    const log = await (await getJson(gw, account, `/v1/sessions/${account.session}/files/log.txt`)).text();
    const lines = new Set(log.split('\n').filter(Boolean));
    const listing = await (await getJson(gw, account, `/v1/sessions/${account.session}/files`)).json();
    const names = new Set((listing.files ?? listing.data ?? []).map((f) => f.path));
    for (const n of done) {
      if (!lines.has(String(n)) || !names.has(`f${n}.txt`)) {
        missing++;
        lost.push(`${account.session}:${n}`);
      }
    }
  }
  const onKilled = stack.sessionsOnKilledReplica ?? [];
  // To trace a loss: the lost runs' requests against the disruptions, and what the sandbox
  // replicas said about moving sessions (takeovers, records that moved under a call, failed saves).
  const lostRequests = requests.filter((r) => r.kind === 'chat_run_code' && lost.includes(`${stack.accounts[r.driver]?.session}:${r.n}`));
  const sandboxSaid =
    missing === 0
      ? []
      : stack.replicas.sandbox.flatMap((r) =>
          r
            .output()
            .split('\n')
            .filter((l) => /taken over|moved|save failed|restore/i.test(l))
            .map((l) => `${r.name} ${l.slice(0, 300)}`),
        );
  return {
    ok: missing === 0 && expected > 0,
    lost_requests: lostRequests.map((r) => ({ ...describe(r, stack.events ?? []), start: r.start, end: r.end })),
    sandbox_said: sandboxSaid.slice(-40),
    sessions: stack.accounts.length,
    sessions_whose_replica_was_killed: onKilled.length,
    files_of_completed_runs: expected,
    missing: missing,
    lost: lost.slice(0, 10),
  };
}
