import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, KvWatchInclude, type KV } from '@nats-io/kv';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connectNats } from '@drael/nats-rpc';
import type { SandboxConfig } from '../config/config.schema.js';
import { SandboxError } from '../sandbox-error.js';

/** Where sessions live across replicas: the one place the JetStream libraries are used. */
export interface SandboxStores {
  /** This process as a replica: its name in placement records and in its per-replica subject. */
  readonly replicaId: string;
  readonly nc: NatsConnection;
  /** key (kind.tenantHash.sessionHash) → SessionRecord, one revision per change (compare-and-set). */
  readonly placement: KV;
  /** Every placement key holding a record now (not deleted) that matches `filter` (KV key syntax: `*`, `>`). */
  placementKeys(filter?: string): Promise<string[]>;
  /** Every placement key's latest entry, a record or a delete's marker (the orphan sweep's listing). */
  placementEntries(): Promise<LatestEntry[]>;
  /**
   * Removes a placement record if it is still at `revision` (a compare-and-delete); true when it
   * was. Nothing is left behind: the KV's own delete leaves a marker per key for good, and every
   * request workspace is a key of its own, so the bucket (and every listing of it) grew with each
   * one ever made. A record written since (a newer revision) is kept.
   */
  removeRecord(key: string, revision: number): Promise<boolean>;
  /** replicaId → heartbeat; the bucket's max age drops the entry of a replica that stopped beating. */
  readonly replicas: KV;
  /** The saved workspaces (a manifest and contents each, workspace-store.ts), named in their session's record. */
  readonly workspaces: ObjectStore;
  /**
   * Deletes an object and its tombstone: the library's delete leaves a small "deleted" entry per
   * name forever, and content-addressed names are many (one per content a session ever saved).
   */
  removeObject(name: string): Promise<void>;
  /**
   * Removes the chunks of uploads cut off by a dying process: the Object Store writes an object's
   * name (its metadata) after its last chunk, so those chunks are named by nothing. Only once their
   * newest chunk is older than `graceMs`, since an upload in progress is unnamed too until its end.
   * Returns how many such uploads it removed.
   */
  collectCutUploads(graceMs: number): Promise<number>;
  readonly ttlMs: number;
  close(): Promise<void>;
}

export const SANDBOX_STORES = Symbol('SANDBOX_STORES');

/** A key's latest entry in a KV bucket: its record (`held`), or the marker a delete left. */
export interface LatestEntry {
  readonly key: string;
  /** The entry's revision (its stream sequence): what a compare-and-delete names. */
  readonly revision: number;
  readonly held: boolean;
}

/** A bucket name of this installation: `<prefix>_sandbox_<what>` unless configured. */
export function bucketNameOf(configured: string, prefix: string, what: string): string {
  if (configured) return configured;
  const p = prefix.replace(/[^A-Za-z0-9_-]/g, '_');
  return p ? `${p}_sandbox_${what}` : `sandbox_${what}`;
}

export function replicaIdOf(config: Pick<SandboxConfig, 'SANDBOX_REPLICA_ID' | 'SANDBOX_INSTANCE'>): string {
  return config.SANDBOX_REPLICA_ID || `${config.SANDBOX_INSTANCE.slice(0, 54)}-${randomBytes(4).toString('hex')}`;
}

/**
 * Connects and opens (creating if needed) the three buckets. Boot fails if JetStream cannot be
 * reached: a replica that could not place or save sessions would serve them from its disk alone,
 * which is what this exists to end (fail closed).
 */
export async function openSandboxStores(config: SandboxConfig): Promise<SandboxStores> {
  const replicaId = replicaIdOf(config);
  const nc = await connectNats({ servers: config.NATS_URL, name: `sandbox-placement-${replicaId}`, security: config });
  try {
    const prefix = config.DRAEL_NATS_PREFIX;
    const ttlMs = config.SANDBOX_REPLICA_TTL_S * 1000;
    const kvm = new Kvm(nc);
    // history 1: only the current record matters; revisions still advance for compare-and-set.
    // An existing bucket (made by another replica, maybe with other settings) is used as it is.
    const openKv = (name: string, opts: { history: number; ttl?: number }) => kvm.create(name, { ...opts, replicas: config.SANDBOX_STORE_REPLICAS }).catch(() => kvm.open(name));
    const placementBucket = bucketNameOf(config.SANDBOX_PLACEMENT_BUCKET, prefix, 'placement');
    const placement = await openKv(placementBucket, { history: 1 });
    const replicas = await openKv(bucketNameOf(config.SANDBOX_REPLICAS_BUCKET, prefix, 'replicas'), { history: 1, ttl: ttlMs });
    const objm = new Objm(nc);
    const objects = bucketNameOf(config.SANDBOX_WORKSPACE_BUCKET, prefix, 'workspaces');
    const maxBytes = config.SANDBOX_STORE_MAX_MB > 0 ? config.SANDBOX_STORE_MAX_MB * 1024 * 1024 : -1;
    const workspaces = await objm.create(objects, { replicas: config.SANDBOX_STORE_REPLICAS, max_bytes: maxBytes }).catch(() => objm.open(objects));
    const jsm = await jetstreamManager(nc);
    // A bucket made before (or by a replica with another setting) takes this replica's bound.
    const stream = await jsm.streams.info(`OBJ_${objects}`);
    if (stream.config.max_bytes !== maxBytes) await jsm.streams.update(`OBJ_${objects}`, { ...stream.config, max_bytes: maxBytes });
    // The Object Store's layout on its stream (NATS ADR-20): OBJ_<bucket>, an object's metadata
    // on $O.<bucket>.M.<name in padded base64url>.
    const metaSubjectOf = (name: string) => `$O.${objects}.M.${Buffer.from(name, 'latin1').toString('base64').replace(/\+/g, '-').replace(/\//g, '_')}`;
    return {
      replicaId,
      nc,
      placement,
      placementKeys: (filter = '>') => liveKeys(placement, jsm, placementBucket, filter),
      placementEntries: () => latestEntries(placement, jsm, placementBucket, '>'),
      removeRecord: async (key, revision) => {
        // Every message of the key up to its revision: with history 1 that is the record itself,
        // unless a newer revision has replaced it (then nothing, and the newer one stays).
        const { purged } = await jsm.streams.purge(`KV_${placementBucket}`, { filter: `$KV.${placementBucket}.${key}`, seq: revision + 1 });
        return purged > 0;
      },
      replicas,
      workspaces,
      removeObject: async (name) => {
        await workspaces.delete(name);
        await jsm.streams.purge(`OBJ_${objects}`, { filter: metaSubjectOf(name) });
      },
      collectCutUploads: async (graceMs) => {
        const stream = `OBJ_${objects}`;
        const chunks = `$O.${objects}.C.`;
        // Chunk subjects first, named objects second: an upload that completes in between is named.
        const info = await jsm.streams.info(stream, { subjects_filter: `${chunks}>` });
        const subjects = Object.keys(info.state.subjects ?? {});
        if (subjects.length === 0) return 0;
        const named = new Set((await workspaces.list()).map((o) => o.nuid));
        let removed = 0;
        for (const subject of subjects) {
          if (named.has(subject.slice(chunks.length))) continue;
          const newest = await jsm.streams.getMessage(stream, { last_by_subj: subject }).catch(() => null);
          if (!newest || Date.now() - newest.time.getTime() < graceMs) continue;
          await jsm.streams.purge(stream, { filter: subject });
          removed++;
        }
        return removed;
      },
      ttlMs,
      close: async () => {
        if (!nc.isClosed()) await nc.drain().catch(() => undefined);
      },
    };
  } catch (err) {
    await nc.close().catch(() => undefined);
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`JetStream at ${config.NATS_URL} is needed for sandbox sessions (placement KV and workspace Object Store) and failed: ${why}`);
  }
}

// How long a listing of the placement's keys may take before it is given up (retryable): this,
// and a millisecond more for each key to deliver (the orphan sweep lists every key of the bucket).
const LISTING_TIMEOUT_MS = 10_000;

/**
 * Every key of a KV bucket (history 1) that holds a value now and matches `filter`. Not the
 * library's keys(): that one ends when a delivered entry says nothing more is pending, and a
 * record written over while it lists can leave that count above zero for good (with history 1 the
 * older message is dropped), so the listing ended only at its consumer's idle heartbeat, 30 s
 * later. Seen here now and then: a new session's cap check or a tenant's budget check took
 * 30,001 ms, and a file call waiting on it got no reply in time (apps/sandbox/test/sessions.spec.ts,
 * issue 20's notes). Here the stream says first which subjects hold a message (one API request,
 * exact), and the listing ends once each of them has been delivered, whatever the counts say.
 */
export async function liveKeys(kv: KV, jsm: JetStreamManager, bucket: string, filter: string): Promise<string[]> {
  return (await latestEntries(kv, jsm, bucket, filter)).filter((e) => e.held).map((e) => e.key);
}

/** The latest entry of every key matching `filter`, records and delete markers alike (liveKeys' listing). */
async function latestEntries(kv: KV, jsm: JetStreamManager, bucket: string, filter: string): Promise<LatestEntry[]> {
  const subjectPrefix = `$KV.${bucket}.`;
  const info = await jsm.streams.info(`KV_${bucket}`, { subjects_filter: `${subjectPrefix}${filter}` });
  const waiting = new Set(Object.keys(info.state.subjects ?? {}));
  if (waiting.size === 0) return [];
  const latest = new Map<string, LatestEntry>();
  const watch = await kv.watch({ key: filter, include: KvWatchInclude.LastValue, ignoreDeletes: false, headers_only: true });
  const timeoutMs = LISTING_TIMEOUT_MS + waiting.size;
  const timer = setTimeout(() => watch.stop(), timeoutMs);
  try {
    for await (const entry of watch) {
      // A value, or a delete's marker: either way the key's latest, and its subject is seen.
      latest.set(entry.key, { key: entry.key, revision: entry.revision, held: entry.operation === 'PUT' });
      waiting.delete(`${subjectPrefix}${entry.key}`);
      if (waiting.size === 0) break;
    }
  } finally {
    clearTimeout(timer);
    watch.stop();
  }
  if (waiting.size > 0) throw new SandboxError('unavailable', `the session store did not list its records within ${Math.round(timeoutMs / 1000)} s; retry`, true);
  return [...latest.values()];
}
