import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, createInbox, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { sandboxCatalog } from '@drael/contracts';
import { HEARTBEAT_HEADER, NatsRpcClient, wireSubject } from '@drael/nats-rpc';
import { b64, placementKeyOf, placementKv, startSandbox, type Sandbox } from './sandbox-harness.js';

// Chaos run 3 (bench/chaos/README.md): a chat hung past 60 s after the sandbox replica holding its
// session was killed. A replica that forwards a session's call to its holder heartbeats to the
// caller while it waits, so the caller waits as long as it does; it must learn within seconds that
// the holder died (SessionRouter.watchHolder), not after the run's whole timeout (timeout_s + 30 s).
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

let a: Sandbox;
let b: Sandbox;
let client: NatsRpcClient;
let nc: NatsConnection;
beforeAll(async () => {
  // The default replica TTL (10 s): a frozen holder stays "alive" for the placement, so the other
  // replica forwards to it rather than taking the session over.
  a = await startSandbox();
  b = await startSandbox({}, { join: a });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix: a.prefix });
  nc = await connect({ servers: NATS_URL });
}, 180_000);
afterAll(async () => {
  for (const s of [a, b]) s?.proc.child.kill('SIGCONT');
  await client?.close();
  await nc?.close();
  await b?.stop();
  await a?.stop();
});

interface Watched {
  /** The replica that heartbeated (the one serving the request), if any did. */
  heardFrom(): string | undefined;
  /** The reply (the envelope), with when it came. */
  reply: Promise<{ at: number; body: { error?: { code: string; retryable: boolean; details?: Record<string, unknown> } } }>;
  close(): void;
}

/** A plain JSON request through the queue group, asking for heartbeats, as a caller in any language may send it. */
function watchedRequest(subject: string, payload: unknown): Watched {
  const inbox = createInbox();
  let heard: string | undefined;
  let settle!: (v: Awaited<Watched['reply']>) => void;
  const reply = new Promise<Awaited<Watched['reply']>>((r) => (settle = r));
  const sub = nc.subscribe(inbox, {
    callback: (err, msg) => {
      if (err) return;
      if (msg.headers?.has(HEARTBEAT_HEADER)) {
        heard = msg.headers.get(HEARTBEAT_HEADER);
        return;
      }
      settle({ at: Date.now(), body: msg.json() });
    },
  });
  const h = natsHeaders();
  h.set(HEARTBEAT_HEADER, '250');
  nc.publish(wireSubject(subject, a.prefix), JSON.stringify(payload), { reply: inbox, headers: h });
  return { heardFrom: () => heard, reply, close: () => sub.unsubscribe() };
}

describe("a forwarded call whose session's holder dies", () => {
  it('is answered unavailable (replica_lost) within seconds by the forwarding replica, not after the run timeout', async () => {
    const ws = { tenant: 'lost', session: 'holder' };
    await client.request(sandboxCatalog.filesWrite, { ...ws, path: 'seed.txt', content_base64: b64('1\n') });
    const { kv, nc: knc } = await placementKv(a.prefix);
    const holderId = (JSON.parse((await kv.get(placementKeyOf(ws.tenant, ws.session)))!.string()) as { holder: string }).holder;
    await knc.close();
    const holder = new RegExp(`^${b.instance}-[0-9a-f]{8}$`).test(holderId) ? b : a;

    // Frozen, the holder keeps its NATS connection (and its subscriptions) but answers nothing:
    // a run sent through the queue group either waits there, or reaches the other replica, which
    // forwards it to the holder and heartbeats to the caller while it waits.
    holder.proc.child.kill('SIGSTOP');
    const sent: Watched[] = [];
    let forwarded: Watched | undefined;
    try {
      // Within ~3 s of the freeze: the holder's placement heartbeat (TTL 10 s) must still be alive,
      // or the other replica would take the session over instead of forwarding. Each request goes
      // to either replica: all 10 to the holder has odds of 1 in 1,024.
      for (let i = 0; i < 10 && !forwarded; i++) {
        const w = watchedRequest(sandboxCatalog.run.subject, { ...ws, runtime: 'bash', code: 'cat seed.txt', timeout_s: 20 });
        sent.push(w);
        await new Promise((r) => setTimeout(r, 300));
        forwarded = sent.find((s) => s.heardFrom() !== undefined);
      }
      expect(forwarded, 'no run reached the replica that does not hold the session').toBeDefined();
      // Killed while the forwarded call waits on it.
      await holder.proc.stop('SIGKILL');
      const killedAt = Date.now();
      holder.proc.child.kill('SIGCONT');

      const answer = await Promise.race([forwarded!.reply, new Promise<undefined>((r) => setTimeout(r, 15_000, undefined))]);
      expect(answer, 'no answer within 15 s of the kill (the run timeout is 50 s)').toBeDefined();
      expect(answer!.body.error).toMatchObject({ code: 'unavailable', retryable: true, details: { reason: 'replica_lost' } });
      // The bound the issue sets for learning that a serving replica died.
      expect(answer!.at - killedAt).toBeLessThan(5_000);
    } finally {
      holder.proc.child.kill('SIGCONT');
      for (const s of sent) s.close();
    }
  }, 120_000);
});
