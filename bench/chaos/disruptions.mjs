// What goes wrong during the drive, one thing at a time, evenly spread over it: a SIGKILL of one
// replica of each service (the sandbox replica that holds the most sessions, so the session check
// has something to prove), of one gateway (its clients see a reset; the drivers then use the other),
// a NATS restart and a Redis restart (it comes back empty: no persistence).
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '../..');
const fromSandbox = async (pkg) => import(pathToFileURL(createRequire(resolve(root, 'apps/sandbox/package.json')).resolve(pkg)).href);
const { Kvm } = await fromSandbox('@nats-io/kv');
const { connect } = await fromSandbox('@nats-io/transport-node');

const sha = (t) => createHash('sha256').update(t).digest('hex').slice(0, 40);
/** A session's key in the sandbox's placement KV (WorkspaceService.keyOf: the hashes of its names). */
const placementKeyOf = (tenant, session) => `session.${sha(`tenant\0${tenant}`)}.${sha(`session\0${tenant}\0${session}`)}`;

/** Which sandbox replica holds each driver's session now (from the placement KV every replica reads). */
async function placements(stack) {
  const nc = await connect({ servers: stack.nats.url });
  try {
    const kv = await new Kvm(nc).open(`${stack.prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_sandbox_placement`);
    const held = new Map();
    for (const a of stack.accounts) {
      const e = await kv.get(placementKeyOf(a.account_id, a.session));
      if (e?.value?.length) held.set(a.session, JSON.parse(e.string()).holder);
    }
    return held;
  } finally {
    await nc.close();
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The disruptions in order; each returns details for the report. */
function plan(stack) {
  const kill = (service, pick = (list) => list[0]) => ({
    what: `SIGKILL ${service}`,
    run: async () => {
      const r = pick(stack.replicas[service]);
      await r.stop('SIGKILL');
      return { replica: r.name };
    },
  });
  /** A shared server stopped, down for a second, started again (its clients must reconnect). */
  const restart = (what, server) => ({
    what: `restart ${what}`,
    run: async () => {
      await server.stop();
      await sleep(1000);
      await server.start();
      return {};
    },
  });
  return [
    kill('billing'),
    {
      what: 'SIGKILL sandbox (the holder of the most sessions)',
      run: async () => {
        const held = await placements(stack);
        const owner = (r) => [...held].filter(([, holder]) => new RegExp(`^${r.instance}-[0-9a-f]{8}$`).test(holder)).map(([s]) => s);
        const r = [...stack.replicas.sandbox].sort((a, b) => owner(b).length - owner(a).length)[0];
        const sessions = owner(r);
        await r.stop('SIGKILL');
        stack.sessionsOnKilledReplica = sessions;
        return { replica: r.name, sessions_it_held: sessions.length };
      },
    },
    kill('search'),
    restart('NATS', stack.nats),
    kill('fetch'),
    kill('agent-run'),
    restart('Redis (empty)', stack.redis),
    {
      what: 'SIGKILL gateway',
      run: async () => {
        const g = stack.gateways[1];
        g.alive = false;
        await g.stop('SIGKILL');
        return { gateway: g.name };
      },
    },
  ];
}

/** Runs the plan spread over `seconds`; resolves with one event per disruption ({what, at, ...}). */
export async function disrupt(stack, seconds, log) {
  const steps = plan(stack);
  const gap = (seconds * 1000) / (steps.length + 1);
  const t0 = Date.now();
  const events = [];
  for (const [i, step] of steps.entries()) {
    await sleep(Math.max(0, t0 + gap * (i + 1) - Date.now()));
    const at = Date.now();
    const details = await step.run();
    events.push({ what: step.what, at, took_ms: Date.now() - at, ...details });
    log(step.what, details);
  }
  return events;
}
