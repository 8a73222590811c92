import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SandboxError } from '../sandbox-error.js';
import { z } from 'zod';
import { byCreation, pageOf, UnknownCursorError, type ListPageQuery, type SessionSummary } from '@drael/contracts';
import { createLogger } from '@drael/logger';
import type { QueueMembershipListener } from '@drael/nats-rpc';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { sessionLimitReached, WorkspaceService, type WorkspaceRef } from '../workspace/workspace.service.js';
import { SANDBOX_STORES, type SandboxStores } from './sandbox-stores.js';
import { untilAnswered } from '../after-answer.js';
import { KeyedChain } from '../keyed-chain.js';

/**
 * A workspace's record in the placement KV, the one every replica reads: who holds it (the only
 * replica that runs or serves it), which saved copy is its latest, and what the listing shows.
 */
export const SessionRecordSchema = z.object({
  id: z.string(),
  holder: z.string(),
  created_at_ms: z.number().nonnegative(),
  last_used_ms: z.number().nonnegative(),
  bytes: z.number().int().nonnegative(),
  // The Object Store name of the latest saved copy (its manifest, workspace-store.ts); absent until the first save.
  object: z.string().optional(),
  // The manifest of a save begun and not (yet) committed: if its replica died midway, the next
  // save collects what it uploaded (nothing else names it).
  pending: z.string().optional(),
  // What the latest saved copy takes in the Object Store (each distinct content once): the
  // tenant's budget of saved bytes counts it (tenant-store-budget.ts). Absent in records written
  // before it existed, which count `bytes` instead.
  saved_bytes: z.number().int().nonnegative().optional(),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

/** Where a call on a workspace is answered. */
export type Placement =
  // Here: this replica holds it. `restoreFrom`: it has just taken it over, its disk copy is not
  // to be trusted, the saved copy of that name is restored before the call.
  // `kept`: the workspace this disk had when the call began is the one to use (its record is as
  // this process last wrote it, or a new request's workspace was just claimed).
  | { where: 'here'; key: string; restoreFrom?: string | undefined; takenOver: boolean; kept?: boolean }
  // Another live replica holds it: the call is forwarded there.
  | { where: 'there'; key: string; holder: string }
  // No record and nothing to create (a read of a session that does not exist): answered here
  // from nothing, nothing claimed.
  | { where: 'nowhere'; key: string };

interface Held {
  revision: number;
  record: SessionRecord;
}

/**
 * Places each workspace on one replica. A record is created (KV create: only one replica wins)
 * by the replica that first needs it; another replica that receives a call for it forwards the
 * call to the holder while the holder's heartbeat is alive, and takes it over (KV update at the
 * revision it read: compare-and-set, so two takers cannot both win) once the holder is dead.
 * Every change of a record goes through compare-and-set: a replica that lost a record (declared
 * dead while alive, e.g. cut from NATS) cannot overwrite the new holder's state.
 */
@Injectable()
export class SessionPlacement implements OnApplicationBootstrap, OnApplicationShutdown, QueueMembershipListener {
  private readonly logger;
  // Records this process holds, with the revision it last wrote.
  private readonly held = new Map<string, Held>();
  // Record changes of one key, one at a time in this process (a claim, a touch, a save).
  private readonly chains = new KeyedChain();
  private heartbeat?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;
  // Out of the queue group (its engine is gone): its heartbeat says so, and the others take its sessions.
  private standingDown = false;
  // The heartbeat write in flight, if any: standing down waits for it, so none lands after its own.
  private beating?: Promise<unknown>;
  // Removes a forgotten workspace's saved copies: set at boot by the WorkspaceStore, the one place
  // that knows their layout in the Object Store.
  private discardCopies?: (key: string, record: SessionRecord) => Promise<void>;

  constructor(
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
    @Inject(SANDBOX_STORES) private readonly stores: SandboxStores,
    private readonly workspaces: WorkspaceService,
  ) {
    this.logger = createLogger('sandbox', config.LOG_LEVEL);
    workspaces.setHooks({
      volumeRemoved: (key) => this.forgetIfHeld(key),
    });
  }

  get replicaId(): string {
    return this.stores.replicaId;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.heartbeat) return;
    await this.beat();
    this.heartbeat = setInterval(
      () => void this.beat().catch((err: unknown) => this.logger.warn({ err }, 'replica heartbeat failed')),
      Math.max(500, Math.floor(this.stores.ttlMs / 3)),
    );
    this.heartbeat.unref();
    const every = Math.min(Math.max(this.shortestIdleMs() / 4, 1_000), 10 * 60_000);
    if (Number.isFinite(every)) {
      this.sweeper = setInterval(() => void this.sweepOrphans().catch((err: unknown) => this.logger.error({ err }, 'orphan session sweep failed')), every);
      this.sweeper.unref();
    }
  }

  private async beat(): Promise<void> {
    const write = this.stores.replicas.put(this.replicaId, JSON.stringify({ at: Date.now(), ...(this.standingDown ? { standing_down: true } : {}) }));
    this.beating = write;
    try {
      await write;
    } finally {
      if (this.beating === write) this.beating = undefined;
    }
  }

  /**
   * This replica leaves its queue group (a critical dependency, its container engine, failed: F2 of
   * the multi-replica pass). From its next heartbeat on (written at once) and while it is out, its
   * heartbeat says it stands down: every other replica takes the sessions it holds over
   * (compare-and-set, restoring each from its saved copy) instead of forwarding their calls here,
   * where they would fail until the engine returned. It keeps beating (the beat is also its check
   * that JetStream answers, which its rejoining waits for). What it held is given up, not deleted:
   * a change it still tries to record fails its compare-and-set once another replica took it.
   */
  async leaving(): Promise<void> {
    this.standingDown = true;
    await this.beating?.catch(() => undefined);
    await this.beat();
    this.logger.warn({ held: this.held.size }, "out of the queue group: standing down, the other replicas take this replica's sessions over");
  }

  /** Back in the queue group: beating again before it takes calls (a session it still holds stays here). */
  async rejoining(): Promise<void> {
    this.standingDown = false;
    await this.beat();
  }

  /**
   * A replica holds its sessions while its heartbeat entry exists (the bucket's max age drops it)
   * and does not say it stands down (out of its queue group: leaving()).
   */
  async isAlive(replicaId: string): Promise<boolean> {
    if (replicaId === this.replicaId) return true;
    const e = await this.stores.replicas.get(replicaId);
    return !!e && e.operation === 'PUT' && !standsDown(e.string());
  }

  /**
   * Where a call on `ref` is answered; claims or takes the workspace over when it is to be answered
   * here. `create`: the call makes the workspace if it does not exist (a run, a write).
   * `unreachable`: a holder the caller found without a subscription (its process is gone, or cut
   * from NATS): dead, whatever its heartbeat still says.
   */
  place(ref: WorkspaceRef, create: boolean, unreachable?: string): Promise<Placement> {
    const key = this.workspaces.keyOf(ref);
    return this.inChain(key, () => this.placeNow(key, ref, create, unreachable));
  }

  /**
   * For a call that may run beside its placement (issue 20: the KV round trip off a run's path;
   * see SessionRouter): starts placing `ref` and returns that placement, once what this disk must
   * do first is done (a stale copy of a new request workspace discarded), or undefined when the
   * call must wait for its placement (a workspace this process does not hold yet, other than a
   * new request's: a session to count against the cap, take over or restore).
   */
  async placeBeside(ref: WorkspaceRef, create: boolean): Promise<{ placed: Promise<Placement> } | undefined> {
    const key = this.workspaces.keyOf(ref);
    // Started on the loop's next turn, once the run has begun: the KV read's sending (a few
    // hundred µs on a process woken from idle) then overlaps the container's start instead of
    // delaying it (bench/sandbox, twenty-sixth session).
    if (this.held.has(key)) return { placed: nextTurn().then(() => this.place(ref, create)) };
    if (!create || ref.scope !== 'request') return undefined;
    // Before the call's own workspace exists here: discarded after, it would be that one.
    await this.workspaces.discardCopy(ref);
    return { placed: this.inChain(key, () => this.placeNow(key, ref, create, undefined, true)) };
  }

  private async placeNow(key: string, ref: WorkspaceRef, create: boolean, unreachable: string | undefined, discarded = false): Promise<Placement> {
    // A request's workspace is new at its first call (the gateway names one per request): claimed
    // at once, one KV round trip fewer than reading first. Taken (it exists): read it as below.
    if (create && ref.scope === 'request' && !this.held.has(key)) {
      // As below: a copy left on this disk is not this workspace's (this process does not hold it;
      // if another replica does, the call goes there, and a takeover restores the saved copy).
      if (!discarded) await this.workspaces.discardCopy(ref);
      const now = Date.now();
      const record: SessionRecord = { id: ref.session, holder: this.replicaId, created_at_ms: now, last_used_ms: now, bytes: 0 };
      const revision = await unlessRaceLost(this.stores.placement.create(key, JSON.stringify(record)));
      if (revision !== undefined) {
        this.held.set(key, { revision, record });
        return { where: 'here', key, takenOver: false, kept: true };
      }
    }
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await this.stores.placement.get(key);
      if (!entry || entry.operation !== 'PUT') {
        this.held.delete(key);
        // A volume made here before placement existed is adopted as it is (and counted, listed).
        const legacy = await this.workspaces.hasUnplacedVolume(ref);
        // A copy made here under placement whose record is gone: its session was deleted or
        // expired (maybe on another replica). Never served nor reused as a new session's files.
        if (!legacy) await this.workspaces.discardCopy(ref);
        if (!create && !legacy) return { where: 'nowhere', key };
        const now = Date.now();
        const record: SessionRecord = { id: ref.session, holder: this.replicaId, created_at_ms: now, last_used_ms: now, bytes: 0 };
        const createRecord = () => unlessRaceLost(this.stores.placement.create(key, JSON.stringify(record)));
        // A tenant's creates in this process are counted one at a time, so parallel ones do not
        // overshoot the cap; replicas creating at the same instant could each overshoot by one.
        const revision =
          legacy || ref.scope === 'request'
            ? await createRecord()
            : await this.inChain(this.workspaces.tenantKeyPrefix(ref.tenant), async () => {
                const max = this.config.SANDBOX_MAX_SESSIONS_PER_TENANT;
                const count = await this.countSessions(ref.tenant);
                if (count >= max) throw sessionLimitReached(count, max, this.config.SANDBOX_SESSION_MAX_IDLE_S);
                return createRecord();
              });
        if (revision === undefined) continue; // another replica created it first: read it again
        this.held.set(key, { revision, record });
        return { where: 'here', key, takenOver: false };
      }
      const record = parseRecord(entry.string());
      if (!record) throw new SandboxError('internal', 'the session record is unreadable', false);
      if (record.holder === this.replicaId && this.held.get(key)?.revision === entry.revision) return { where: 'here', key, takenOver: false, kept: true };
      if (record.holder !== this.replicaId && record.holder !== unreachable && (await this.isAlive(record.holder))) {
        this.held.delete(key);
        return { where: 'there', key, holder: record.holder };
      }
      // Its holder is dead (or it is ours from a revision this process did not write): take it over.
      const mine: SessionRecord = { ...record, holder: this.replicaId };
      const revision = await unlessRaceLost(this.stores.placement.update(key, JSON.stringify(mine), entry.revision));
      if (revision === undefined) continue; // another replica took it first
      this.held.set(key, { revision, record: mine });
      this.logger.info({ key, from: record.holder }, 'session taken over');
      return { where: 'here', key, takenOver: true, restoreFrom: record.object };
    }
    throw new SandboxError('unavailable', 'the session is being moved between replicas; retry', true);
  }

  /** Set once at boot by the WorkspaceStore: how a deleted or expired workspace's saved copies go. */
  onDiscard(fn: (key: string, record: SessionRecord) => Promise<void>): void {
    this.discardCopies = fn;
  }

  /** The saved copy named in the record this replica holds (undefined: not held here). */
  savedCopyOf(key: string): { object?: string | undefined } | undefined {
    const held = this.held.get(key);
    return held ? { object: held.record.object } : undefined;
  }

  /**
   * Notes in the record that a save to `manifest` begins (compare-and-set, like every change), and
   * returns the record as it was: its `pending` names what an interrupted save may have left.
   * 'gone': deleted meanwhile. Fails (typed, retryable) if the record moved to another replica.
   */
  async recordPending(key: string, manifest: string): Promise<SessionRecord | 'gone'> {
    return this.inChain(key, async () => {
      const held = this.held.get(key);
      if (!held) return 'gone';
      const before = held.record;
      return (await this.updateHeld(key, held, { ...before, pending: manifest })) === 'gone' ? 'gone' : before;
    });
  }

  /**
   * Notes a call's end on a record this replica holds: last use, and after a change its new saved
   * copy (the save begun with recordPending is then no longer pending) and size. Fails (typed,
   * retryable) if the record moved to another replica meanwhile: the change made here is not the
   * session's any more.
   */
  async recordUse(key: string, change?: { object?: string; bytes: number; saved_bytes?: number }): Promise<'kept' | 'gone'> {
    return this.inChain(key, async () => {
      const held = this.held.get(key);
      if (!held) return 'gone';
      const next: SessionRecord = { ...held.record, last_used_ms: Date.now(), ...(change ?? {}) };
      if (change?.object !== undefined) delete next.pending;
      return this.updateHeld(key, held, next);
    });
  }

  /**
   * recordUse for a call that changed nothing, once its answer has left: the answer does not depend
   * on it (nothing to commit, nothing to lose). Still in the key's chain, so the workspace's next
   * call is placed after it.
   */
  recordUseAfterAnswer(key: string, bytes: () => Promise<number>): void {
    void untilAnswered()
      .then(bytes)
      .then((b) => this.recordUse(key, { bytes: b }))
      .catch((err: unknown) => this.logger.warn({ err, key }, "a workspace's last use could not be recorded"));
  }

  /** Replaces the held record at the revision this process wrote last (compare-and-set); in the key's chain. */
  private async updateHeld(key: string, held: Held, next: SessionRecord): Promise<'kept' | 'gone'> {
    try {
      const revision = await this.stores.placement.update(key, JSON.stringify(next), held.revision);
      this.held.set(key, { revision, record: next });
      return 'kept';
    } catch (err) {
      this.held.delete(key);
      const now = await this.stores.placement.get(key);
      if (!now || now.operation !== 'PUT') return 'gone';
      if (parseRecord(now.string())?.holder === this.replicaId) {
        // Still ours: the write failed or went unanswered (JetStream recovering after a NATS
        // restart), so whether it was applied is unknown. The next call restores the saved copy.
        this.logger.warn({ key, err }, 'session record write failed while a call ran here');
        throw new SandboxError('unavailable', "the session's record could not be written; this call's changes may not be kept, retry", true);
      }
      this.logger.warn({ key, err }, 'session record moved while a call ran here');
      throw new SandboxError('unavailable', 'the session moved to another replica while this call ran; its changes were not kept, retry', true);
    }
  }

  /** Forgets that this process holds the record: the next call claims it again (and restores). */
  unhold(key: string): void {
    this.held.delete(key);
  }

  /** Deleted or expired here: its record and saved copies go too, if this replica holds it. */
  private async forgetIfHeld(key: string): Promise<void> {
    await this.inChain(key, async () => {
      const entry = await this.stores.placement.get(key);
      const record = entry?.operation === 'PUT' ? parseRecord(entry.string()) : undefined;
      // A stale copy of a session another replica holds (or held): only this disk's copy went.
      // A dead holder's sessions expire by their record's last use (sweepOrphans), not by this disk's.
      if (!entry || !record || record.holder !== this.replicaId) return;
      await this.forget(key, entry.revision, record);
    });
  }

  private async forget(key: string, revision: number, record: SessionRecord): Promise<void> {
    // Changed meanwhile (used again, or taken over): not ours to delete. A store that fails leaves it for the next sweep.
    const removed = await this.stores.removeRecord(key, revision).catch(() => false);
    if (!removed) return;
    this.held.delete(key);
    await this.discardCopies?.(key, record).catch((err: unknown) => this.logger.warn({ err, key }, "a deleted session's saved copies could not all be removed"));
  }

  /** Sessions (not request workspaces) a tenant holds, across every replica. */
  async countSessions(tenant: string): Promise<number> {
    return (await this.tenantKeys(tenant)).length;
  }

  private async tenantKeys(tenant: string): Promise<string[]> {
    return this.stores.placementKeys(`${this.workspaces.tenantKeyPrefix(tenant)}*`);
  }

  /**
   * One page of a tenant's sessions, from the placement records (every replica's). A record counts
   * only if its id names its own key under this tenant, so no other tenant's session is listed.
   */
  async listSessions(tenant: string, query: ListPageQuery): Promise<{ sessions: SessionSummary[]; has_more: boolean; total: number; max_sessions: number }> {
    const keys = await this.tenantKeys(tenant);
    const found: SessionRecord[] = [];
    await Promise.all(
      keys.map(async (key) => {
        const entry = await this.stores.placement.get(key);
        const record = entry?.operation === 'PUT' ? parseRecord(entry.string()) : undefined;
        if (record && this.workspaces.keyOf({ tenant, session: record.id }) === key) found.push(record);
      }),
    );
    found.sort(
      byCreation(
        (s) => s.created_at_ms,
        (s) => s.id,
      ),
    );
    let page;
    try {
      page = pageOf(found, query, (s) => s.id);
    } catch (err) {
      if (err instanceof UnknownCursorError)
        throw new SandboxError('bad_request', `No session '${err.after}' to list after (it does not exist, or expired)`, false, { param: 'after' });
      throw err;
    }
    return {
      sessions: page.data.map((s) => ({ id: s.id, bytes: s.bytes, created_at: Math.floor(s.created_at_ms / 1000), last_used_at: Math.floor(s.last_used_ms / 1000) })),
      has_more: page.has_more,
      total: keys.length,
      max_sessions: this.config.SANDBOX_MAX_SESSIONS_PER_TENANT,
    };
  }

  /**
   * Idle expiry of workspaces no live replica holds (their holder died): a live holder expires
   * its own by its disk's last use (WorkspaceService's sweep); these by their record's. The same
   * listing prunes delete markers: versions before 7a94c76 removed records with the KV's delete,
   * which left one per key for good (one for every request workspace an installation ever made),
   * and each costs every listing one more entry. A marker goes by a compare-and-delete at its
   * revision, so a record written on its key since is never touched.
   */
  async sweepOrphans(): Promise<number> {
    let removed = 0;
    for (const { key, revision, held } of await this.stores.placementEntries()) {
      if (!held) {
        await this.stores.removeRecord(key, revision).catch(() => false);
        continue;
      }
      const maxIdleMs = key.startsWith('request.') ? this.config.SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S * 1000 : this.config.SANDBOX_SESSION_MAX_IDLE_S * 1000;
      if (maxIdleMs <= 0) continue;
      const gone = await this.inChain(key, async () => {
        const entry = await this.stores.placement.get(key);
        const record = entry?.operation === 'PUT' ? parseRecord(entry.string()) : undefined;
        if (!entry || !record || record.holder === this.replicaId || Date.now() - record.last_used_ms < maxIdleMs) return false;
        if (await this.isAlive(record.holder)) return false;
        await this.forget(key, entry.revision, record);
        return true;
      });
      if (gone) removed += 1;
    }
    return removed;
  }

  private shortestIdleMs(): number {
    const kinds = [this.config.SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S, this.config.SANDBOX_SESSION_MAX_IDLE_S].filter((s) => s > 0);
    return kinds.length ? Math.min(...kinds) * 1000 : Number.POSITIVE_INFINITY;
  }

  private inChain<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.chains.run(key, fn);
  }

  /** Stops beating, then says so at once: the others take this replica's sessions over without waiting for the TTL. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.heartbeat);
    clearInterval(this.sweeper);
    await this.stores.replicas.delete(this.replicaId).catch(() => undefined);
    await this.stores.close();
  }
}

/** Resolves on the event loop's next turn (after the I/O callbacks and the work already queued). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A heartbeat written while its replica is out of the queue group (`standing_down`). */
function standsDown(heartbeat: string): boolean {
  try {
    return (JSON.parse(heartbeat) as { standing_down?: unknown }).standing_down === true;
  } catch {
    return false;
  }
}

export function parseRecord(text: string): SessionRecord | undefined {
  try {
    const parsed = SessionRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

// JetStream's answers to a compare-and-set that another writer won ("wrong last sequence").
const LOST_RACE_CODES = new Set([10071, 10164]);

/**
 * A compare-and-set write to the placement records: its revision, or undefined when another
 * replica wrote first. Any other failure is the store's own and is answered as what it is: every
 * failed write once read as a lost race, and a full JetStream came out, after five rounds, as "the
 * session is being moved between replicas" for every tenant (multi-replica pass, F3).
 */
async function unlessRaceLost(write: Promise<number>): Promise<number | undefined> {
  try {
    return await write;
  } catch (err) {
    if (LOST_RACE_CODES.has((err as { code?: unknown }).code as number)) return undefined;
    throw sessionStoreFailure(err);
  }
}

/** A failure of the session store (JetStream), typed and retryable, saying what it was. */
function sessionStoreFailure(err: unknown): SandboxError {
  return new SandboxError('unavailable', `${describeStoreFailure(err)}; retry later`, true);
}

/** What went wrong with the session store, in words: full (an operator's matter), or its own message. */
export function describeStoreFailure(err: unknown): string {
  const message = (err as { message?: unknown })?.message;
  const text = typeof message === 'string' ? message : String(err);
  if (/insufficient (storage )?resources|maximum bytes|storage.*(full|exceeded)/i.test(text)) {
    return "the sandbox's session store (NATS JetStream) is full: sessions cannot be placed or saved until an operator frees space";
  }
  return `the sandbox's session store (NATS JetStream) failed (${text.slice(0, 200)})`;
}
