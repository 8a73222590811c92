import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPrefix } from '@drael/test-support';
import { liveKeys } from '../src/placement/sandbox-stores.js';

// The placement's key listing (a new session's cap, a tenant's budget, the session list, the
// orphan sweep). The library's keys() ended on a pending count that a record written over while
// it listed could leave above zero, and then only at its consumer's 30 s heartbeat: seen in runs
// of the sandbox's suite as a cap check of 30,001 ms and a file call with no reply in time.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
let nc: NatsConnection;
let jsm: JetStreamManager;
let kv: KV;
const bucket = `${testPrefix('listing').replace(/[^A-Za-z0-9_-]/g, '_')}_placement`;

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
  jsm = await jetstreamManager(nc);
  kv = await new Kvm(nc).create(bucket, { history: 1 });
});
afterAll(async () => {
  await kv?.destroy().catch(() => undefined);
  await nc?.close();
});

describe('the placement key listing', () => {
  it('lists exactly the keys holding a record that match the filter: deleted ones and other tenants left out', async () => {
    expect(await liveKeys(kv, jsm, bucket, 'session.t1.*')).toEqual([]);
    for (let i = 0; i < 5; i++) await kv.put(`session.t1.s${i}`, '{}');
    await kv.put('session.t2.s0', '{}');
    await kv.put('request.t1.r0', '{}');
    await kv.delete('session.t1.s3');
    expect((await liveKeys(kv, jsm, bucket, 'session.t1.*')).sort()).toEqual(['session.t1.s0', 'session.t1.s1', 'session.t1.s2', 'session.t1.s4']);
    expect((await liveKeys(kv, jsm, bucket, '*.t1.*')).sort()).toEqual(['request.t1.r0', 'session.t1.s0', 'session.t1.s1', 'session.t1.s2', 'session.t1.s4']);
    expect((await liveKeys(kv, jsm, bucket, '>')).length).toBe(6);
    // Only deleted ones left under a filter: none.
    await kv.delete('session.t2.s0');
    expect(await liveKeys(kv, jsm, bucket, 'session.t2.*')).toEqual([]);
  });

  it('ends with every key while the records are written over and new ones made, listing after listing', async () => {
    let writing = true;
    let n = 0;
    const writer = (async () => {
      while (writing) {
        const key = `session.t3.s${n % 6}`;
        await kv.put(key, JSON.stringify({ n: n++ }));
        if (n % 5 === 0) await kv.put(`request.t3.r${n}`, '{}');
      }
    })();
    try {
      await kv.put('session.t3.s0', '{}');
      for (let round = 0; round < 200; round++) {
        const keys = await liveKeys(kv, jsm, bucket, 'session.t3.*');
        // Each listing has every key written before it began (s0 first of all), and no other tenant's.
        expect(keys).toContain('session.t3.s0');
        expect(keys.every((k) => k.startsWith('session.t3.'))).toBe(true);
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(n).toBeGreaterThan(0);
  }, 60_000);
});
