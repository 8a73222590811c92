import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { COMMON_ERROR_CODES, defineEntry, healthEntry } from '@drael/contracts';
import { testPrefix } from './fixtures/prefix.js';
import { connect, createInbox, headers as natsHeaders } from '@nats-io/transport-node';
import { HEARTBEAT_HEADER, NatsRpcClient, RpcError, wireSubject } from '../src/index.js';

// Issue 19, item 2: a caller learns within seconds that the replica serving its request died,
// instead of waiting for the request's whole timeout; only an idempotent request is sent again.
// Real processes: replicas of a small service (the boot fixture), SIGKILLed mid-request.

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const fixture = new URL('./fixtures/boot-fixture.mjs', import.meta.url).pathname;
const EchoRequest = z.object({ text: z.string(), delay_ms: z.number().int().optional() });
const EchoReply = z.object({ text: z.string() });
// A whole timeout far beyond this test's own (30 s): a caller left hanging fails the test.
const LONG = 120_000;
const echo = (idempotent: boolean) =>
  defineEntry({ subject: 'search.echo.v1', service: 'search', request: EchoRequest, reply: EchoReply, errors: COMMON_ERROR_CODES, timeoutMs: LONG, idempotent });

interface Replica {
  child: ChildProcess;
  output(): string;
}

const started: Replica[] = [];
afterEach(() => {
  for (const r of started.splice(0)) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
});

function boot(prefix: string): Replica {
  const child = spawn(process.execPath, [fixture], {
    env: { PATH: process.env.PATH ?? '', NATS_URL, DRAEL_NATS_PREFIX: prefix, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const replica = { child, output: () => out };
  started.push(replica);
  return replica;
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

/** Both replicas in the queue group: each has answered a health request of its own. */
async function bootReplicas(prefix: string, client: NatsRpcClient, n: number): Promise<Replica[]> {
  const replicas = Array.from({ length: n }, () => boot(prefix));
  await until('replicas listening', () => replicas.every((r) => r.output().includes('search listening')));
  await client.request(healthEntry('search'), {}, { timeoutMs: 5_000 });
  return replicas;
}

/** How many heartbeats the client's watched requests have heard (counted on its one reply subscription; call before its first request). */
function countBeats(client: NatsRpcClient): () => number {
  let n = 0;
  const subscribe = client.connection.subscribe.bind(client.connection);
  vi.spyOn(client.connection, 'subscribe').mockImplementation((subject, opts) =>
    subscribe(subject, {
      ...opts,
      callback: (err, msg) => {
        if (!err && msg.headers?.has(HEARTBEAT_HEADER)) n++;
        return opts?.callback?.(err, msg);
      },
    }),
  );
  return () => n;
}

const received = (r: Replica, text: string) => r.output().includes(`"text":"${text}"`);

describe('a replica that dies mid-request', { timeout: 120_000 }, () => {
  it('answers its caller with a typed, retryable unavailable (replica_lost) long before the request timeout, and a run-like request is not sent again', async () => {
    const prefix = testPrefix('loss');
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
    const beats = countBeats(client);
    try {
      const replicas = await bootReplicas(prefix, client, 2);
      const pending = client.request(echo(false), { text: 'not-idempotent', delay_ms: 60_000 });
      const outcome = pending.then(
        () => undefined,
        (err: unknown) => err,
      );
      await until('a replica took the request', () => replicas.some((r) => received(r, 'not-idempotent')));
      // Killed once it has beaten (after its grace), so that the caller knows whom to ask NATS about.
      await until('the replica beat', () => beats() > 0);
      const serving = replicas.find((r) => received(r, 'not-idempotent'))!;
      const other = replicas.find((r) => r !== serving)!;
      serving.child.kill('SIGKILL');

      const err = await outcome;
      expect(err).toBeInstanceOf(RpcError);
      expect((err as RpcError).code).toBe('unavailable');
      expect((err as RpcError).retryable).toBe(true);
      // Told by NATS that the replica's connection is gone, not by the long silence limit.
      expect((err as RpcError).details).toMatchObject({ reason: 'replica_lost', detected_by: 'left_nats', subject: 'search.echo.v1' });
      // Never sent twice: the surviving replica never saw it.
      expect(received(other, 'not-idempotent')).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('sends an idempotent request once more, to a live replica, which answers it', async () => {
    const prefix = testPrefix('retry');
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
    try {
      const replicas = await bootReplicas(prefix, client, 2);
      const pending = client.request(echo(true), { text: 'idempotent', delay_ms: 1_500 });
      // The first replica to take it dies before answering; the delay is long enough to kill it first.
      await until('a replica took the request', () => replicas.some((r) => received(r, 'idempotent')));
      const serving = replicas.find((r) => received(r, 'idempotent'))!;
      const other = replicas.find((r) => r !== serving)!;
      serving.child.kill('SIGKILL');

      await expect(pending).resolves.toEqual({ text: 'idempotent' });
      expect(received(other, 'idempotent')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('fails typed and retryable after one liveness window when the replica it reached died with it unread (no heartbeat names anyone to ask about), not after the silence limit', async () => {
    const prefix = testPrefix('unclaimed');
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix, heartbeatIntervalMs: 200, livenessMs: 1_000 });
    try {
      const [replica] = await bootReplicas(prefix, client, 1);
      // Frozen, it keeps its subscription: the request is delivered to it and waits unread.
      replica!.child.kill('SIGSTOP');
      const outcome = client.request(echo(false), { text: 'unread', delay_ms: 10 }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 300));
      replica!.child.kill('SIGKILL');
      const err = await outcome;
      expect(err).toBeInstanceOf(RpcError);
      // Told by the unclaimed rule (one window), not by the silence limit (five windows).
      expect((err as RpcError).details).toMatchObject({ reason: 'replica_lost', detected_by: 'unclaimed' });
    } finally {
      await client.close();
    }
  });

  it('keeps waiting for a live replica that is only slow (its heartbeats say it is alive)', async () => {
    const prefix = testPrefix('slow');
    // A short liveness window, so "slow" is several windows long without making the test slow.
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix, heartbeatIntervalMs: 200, livenessMs: 1_000 });
    try {
      await bootReplicas(prefix, client, 1);
      await expect(client.request(echo(false), { text: 'slow', delay_ms: 4_000 })).resolves.toEqual({ text: 'slow' });
    } finally {
      await client.close();
    }
  });

  it('hears every watched request on one reply subscription: concurrent requests each get their own reply', async () => {
    const prefix = testPrefix('inbox');
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix, heartbeatIntervalMs: 100, livenessMs: 1_000 });
    try {
      const subscribe = vi.spyOn(client.connection, 'subscribe');
      // Its health request (5 s bound, above the 1 s liveness window) is a watched request too.
      await bootReplicas(prefix, client, 1);
      // Different delays, so replies and heartbeats of the requests interleave on the one subscription.
      const texts = ['a', 'b', 'c', 'd', 'e'];
      const replies = await Promise.all(texts.map((text, i) => client.request(echo(true), { text, delay_ms: 50 + 120 * ((i * 3) % 5) })));
      expect(replies).toEqual(texts.map((text) => ({ text })));
      await expect(client.request(echo(true), { text: 'later' })).resolves.toEqual({ text: 'later' });
      // One subscription for all seven (a subscription per request made seven).
      expect(subscribe).toHaveBeenCalledTimes(1);
    } finally {
      await client.close();
    }
  });

  it('sends no heartbeat for an answer given within the grace (a quarter of the interval), and beats through a longer one', async () => {
    const prefix = testPrefix('beat');
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
    const nc = await connect({ servers: NATS_URL.replace(/^nats:\/\//, '') });
    try {
      await bootReplicas(prefix, client, 1);
      // What arrives on the reply subject of one request that asks for a beat every `interval` ms.
      const heard = async (req: object, interval: number): Promise<string[]> => {
        const inbox = createInbox();
        const kinds: string[] = [];
        const sub = nc.subscribe(inbox, {
          callback: (_err, msg) => {
            kinds.push(msg.headers?.has(HEARTBEAT_HEADER) ? 'beat' : 'reply');
            if (!msg.headers?.has(HEARTBEAT_HEADER)) sub.unsubscribe();
          },
        });
        const h = natsHeaders();
        h.set(HEARTBEAT_HEADER, String(interval));
        nc.publish(wireSubject('search.echo.v1', prefix), JSON.stringify(req), { reply: inbox, headers: h });
        await sub.closed;
        return kinds;
      };
      // Answered at once (no await in the handler's way): the reply alone.
      expect(await heard({ text: 'now' }, 100)).toEqual(['reply']);
      // Answered after a wait (a search waiting for SearXNG) shorter than the grace (2.5 s of a
      // 10 s interval): the reply alone. The handler's timer is due before the grace's, so the
      // reply leaves first however late the loop runs them. A beat at once sent ['beat', 'reply'].
      expect(await heard({ text: 'soon', delay_ms: 50 }, 10_000)).toEqual(['reply']);
      // Answered after 350 ms with a beat asked every 100 ms: beats from the grace (25 ms) on.
      const slow = await heard({ text: 'later', delay_ms: 350 }, 100);
      expect(slow[0]).toBe('beat');
      expect(slow.filter((k) => k === 'beat').length).toBeGreaterThanOrEqual(3);
      expect(slow.at(-1)).toBe('reply');
    } finally {
      await nc.close();
      await client.close();
    }
  });

  it('fails typed and retryable after one liveness window when the replica dies within the grace, before its first beat (nothing names it)', async () => {
    const prefix = testPrefix('grace');
    // A 10 s interval: the first beat would come 2.5 s after the handler starts; the replica is
    // killed as soon as it has the request, long before. The window (3 s) is above the grace, as
    // the defaults' 4 s window is above their 0.25 s grace.
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix, heartbeatIntervalMs: 10_000, livenessMs: 3_000 });
    try {
      const replicas = await bootReplicas(prefix, client, 2);
      const outcome = client.request(echo(false), { text: 'in-grace', delay_ms: 60_000 }).catch((e: unknown) => e);
      await until('a replica took the request', () => replicas.some((r) => received(r, 'in-grace')));
      const serving = replicas.find((r) => received(r, 'in-grace'))!;
      const other = replicas.find((r) => r !== serving)!;
      serving.child.kill('SIGKILL');
      const err = await outcome;
      expect(err).toBeInstanceOf(RpcError);
      expect((err as RpcError).code).toBe('unavailable');
      expect((err as RpcError).retryable).toBe(true);
      // No beat came, so no replica to ask NATS about: told by the unclaimed rule (one window),
      // not by the silence limit (five windows) nor the request's timeout (120 s).
      expect((err as RpcError).details).toMatchObject({ reason: 'replica_lost', detected_by: 'unclaimed' });
      // Not idempotent: never sent to the surviving replica.
      expect(received(other, 'in-grace')).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('waits no longer than the bound the entry derives from the request', async () => {
    const prefix = testPrefix('bound');
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
    const derived = defineEntry({
      subject: 'search.echo.v1',
      service: 'search',
      request: EchoRequest,
      reply: EchoReply,
      errors: COMMON_ERROR_CODES,
      timeoutMs: LONG,
      // The request says how long it may take; the caller waits that, not the entry's ceiling.
      timeoutFor: (req) => Math.floor((req.delay_ms ?? 0) / 10),
    });
    try {
      await bootReplicas(prefix, client, 1);
      const err = await client.request(derived, { text: 'bounded', delay_ms: 60_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RpcError);
      expect((err as RpcError).code).toBe('timeout');
      expect((err as RpcError).message).toContain('no reply within 6000 ms');
    } finally {
      await client.close();
    }
  });
});

describe('a request given to a replica that dies before it says anything', { timeout: 60_000 }, () => {
  // NATS can hand a request to a replica whose connection is about to close (SIGKILLed a moment
  // before): no heartbeat, no reply, and NATS still up. A live replica beats within a quarter of its
  // beat interval, so one liveness window of silence from the start means nobody took it. The chaos
  // run saw a fetch wait 20 s (the silence limit) for this.
  const swallowFirst = async (prefix: string, then?: (nc: Awaited<ReturnType<typeof connect>>) => void) => {
    const nc = await connect({ servers: NATS_URL.replace(/^nats:\/\//, '') });
    const subject = wireSubject('search.echo.v1', prefix);
    let swallowed = 0;
    nc.subscribe(subject, {
      max: 1,
      callback: () => {
        swallowed++;
        then?.(nc);
      },
    });
    await nc.flush();
    return { nc, swallowed: () => swallowed, subject };
  };

  it('sends an idempotent request once more, and a live replica answers it', async () => {
    const prefix = testPrefix('untaken-retry');
    const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix, heartbeatIntervalMs: 100, livenessMs: 500 });
    let answered = 0;
    // The live replica subscribes once the dying one has the first copy, so the copy sent again is its.
    const dying = await swallowFirst(prefix, (nc) => {
      nc.subscribe(wireSubject('search.echo.v1', prefix), {
        max: 1,
        callback: (_err, msg) => {
          answered++;
          const packet = msg.json<{ id: string; data: { text: string } }>();
          msg.respond(JSON.stringify({ id: packet.id, response: { result: { text: packet.data.text } }, isDisposed: true }));
        },
      });
    });
    try {
      // A bound between one liveness window and the silence limit (5 windows): only a caller that
      // gives up on the dying replica after one window has time to send it again.
      const bounded = defineEntry({ ...echo(true), timeoutMs: 2_000 });
      await expect(client.request(bounded, { text: 'again' })).resolves.toEqual({ text: 'again' });
      expect(dying.swallowed()).toBe(1);
      expect(answered).toBe(1);
    } finally {
      await dying.nc.close();
      await client.close();
    }
  });
});

describe('a request lost with its NATS server', { timeout: 120_000 }, () => {
  it('fails typed and retryable once the connection is back, when no replica ever took it (never waits for its whole timeout)', async () => {
    // NATS of the test's own (it is restarted); the machine's shared one is never touched.
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((res) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => res(p));
      });
    });
    const startNats = () => spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    let server = startNats();
    const url = `nats://127.0.0.1:${port}`;
    try {
      let client: NatsRpcClient | undefined;
      for (let i = 0; i < 100 && !client; i++) {
        client = await NatsRpcClient.connect({ servers: url }).catch(async () => {
          await new Promise((r) => setTimeout(r, 100));
          return undefined;
        });
      }
      // A subscriber that takes nothing (no heartbeat, no reply): the request is in NATS's hands only.
      const silent = client!.connection.subscribe('search.echo.v1');
      await client!.connection.flush();
      const outcome = client!.request(echo(false), { text: 'lost' }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 200));
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGKILL');
      await exited;
      server = startNats();
      const err = await outcome;
      expect(err).toBeInstanceOf(RpcError);
      expect((err as RpcError).details).toMatchObject({ reason: 'replica_lost', detected_by: 'lost_in_reconnect' });
      silent.unsubscribe();
      await client!.close();
    } finally {
      server.kill('SIGKILL');
    }
  });
});
