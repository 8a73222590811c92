import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, mkdir, readdir, readFile, rename, rm, rmdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { z } from 'zod';
import { isSessionId, SESSION_ID_RULE, type WorkspaceScope } from '@drael/contracts';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { createVolume, mountVolume, mountsUnder, unmountVolume, volumeUsage, type VolumeUsage } from './session-volume.js';
import { SandboxError } from '../sandbox-error.js';
import { sweepAbandonedUploads } from './upload-staging.js';
import { untilAnswered } from '../after-answer.js';

/**
 * A session counts as full once less than this much of its quota is free: the filesystem keeps
 * some slack below its size (a partial block, metadata), so "exactly zero left" never happens.
 * Runs are refused then, and a file write may not eat into it.
 */
export const QUOTA_HEADROOM_BYTES = 1024 * 1024;

/** A mounted session workspace; `release()` once done with it. */
export interface SessionWorkspace {
  readonly path: string;
  /** Made by this acquire from the pool's fresh tmpfs: empty, its whole quota free. */
  readonly fresh: boolean;
  usage(): Promise<VolumeUsage>;
  release(): Promise<void>;
}

/** Names one workspace: a tenant's session, or the workspace of one gateway request. */
export interface WorkspaceRef {
  readonly tenant: string;
  readonly session: string;
  readonly scope?: WorkspaceScope | undefined;
}

/**
 * Serialises the operations queued on it, one after the other; `users` counts the calls holding or
 * waiting on it, so the map keeping it can drop it once none is left (see inQueue).
 */
interface Chain {
  chain: Promise<unknown>;
  users: number;
}

interface Entry extends Chain {
  refs: number;
  mounted: boolean;
  idle?: NodeJS.Timeout;
  // Deleted while in use: the volume goes when its last user lets go.
  removeOnRelease?: boolean;
  // Deleted: the entry left the map; a user that was already waiting on it must not recreate it.
  gone?: boolean;
  // A request's workspace made from a fresh tmpfs (issue 20), not an ext4 volume: never unmounted
  // while it exists (its files live only in it); its `.img` is an empty marker.
  tmpfs?: boolean;
  // Where that tmpfs is mounted: the prepared slot it came with, kept there for its whole life
  // (moving it would put two host commands before the request's next run). The entry stays in
  // the map while the tmpfs is mounted, so this is where every user of the workspace finds it.
  slot?: string;
  // Its last use (ms), as the idle sweep reads it: kept here at once, written to the image's
  // mtime (what a restarted process or another one on this state dir reads) once the call's
  // answer has left. See touch().
  usedAt?: number;
  // That write is scheduled and not begun yet: later uses in the same call need no other.
  markPending?: boolean;
  // Acquires of the mounted workspace so far: what `knownUsage` is checked against.
  uses?: number;
  // Its usage as read by a holder that changes nothing (a save), while it alone held it, after
  // acquire number `at`. The next acquire, if nobody held it in between, reads this instead of a
  // statfs (issue 20: one fewer before a run): nothing has written to it since.
  knownUsage?: { at: number; value: VolumeUsage };
}

// A volume stays mounted this long after its last user, so a run followed by file calls (the
// usual pattern) does not pay an unmount + mount (and the flush between) each time.
const IDLE_UNMOUNT_MS = 20_000;

/**
 * What a session volume's listing needs and its name on disk hides (only hashes appear there):
 * its id, when it was made, and what its files took at its last use. `<hash>.json` beside the
 * volume's `<hash>.img`; written at creation (or at the first use of a volume made before it
 * existed) and its bytes updated whenever the volume's last user lets go.
 */
const SessionRecordSchema = z.object({
  id: z.string(),
  created_at_ms: z.number().nonnegative(),
  bytes: z.number().int().nonnegative(),
  // Made (or restored) by a replica that places sessions in JetStream: its record there is the
  // truth, and this copy is never adopted again once that record is gone (a deleted session).
  placed: z.boolean().optional(),
});
type SessionRecord = z.infer<typeof SessionRecordSchema>;

/**
 * What the placement (sessions across replicas, placement/) hooks in: what to do when a volume is
 * deleted here (its record and saved copy go too). With hooks set, the per-tenant cap is counted
 * by the placement, over every replica, before a record is created; not here from one disk.
 */
export interface WorkspaceHooks {
  volumeRemoved(key: string): Promise<void>;
}

/** Refuses any session id outside the contracts' rule before it comes near a path. */
export function assertSessionId(session: string): void {
  if (!isSessionId(session)) {
    throw new SandboxError('invalid_session', `session id must match ${SESSION_ID_RULE}`, false, { param: 'session' });
  }
}

/**
 * Workspaces per (tenant, session). On disk only hashes appear: sessions/<H(tenant)>/<H(tenant,
 * session)>.img, so neither a tenant name nor a session id ever becomes a path, and two tenants
 * using one session id get two different volumes. A request's workspace (scope `request`) lives
 * under requests/ with a hash of its own, so no client session id can name it.
 */
@Injectable()
export class WorkspaceService implements OnApplicationShutdown {
  private readonly root: string;
  private readonly requestsRoot: string;
  // One entry per volume this process has mounted, holds, or is working on. Dropped once nothing is
  // mounted and nobody holds or waits on it (two live entries of one volume could mount it twice),
  // or when its volume is deleted: a tenant cannot grow it by naming sessions that are refused or
  // do not exist.
  private readonly entries = new Map<string, Entry>();
  // Session creations of one tenant, one at a time, so that concurrent creates cannot overshoot
  // SANDBOX_MAX_SESSIONS_PER_TENANT; dropped once nobody waits on it.
  private readonly tenantCreates = new Map<string, Chain>();
  // Directories of request workspaces this process has made: never removed while it runs, so
  // a new request's workspace is not one more mkdir on its run's path.
  private readonly madeDirs = new Set<string>();
  private sweeper?: NodeJS.Timeout;
  private hooks?: WorkspaceHooks;
  // Called with a workspace's directory before it is unmounted (the runtime's prepared
  // containers on it go first, so that no container holds a volume mounted nowhere else).
  private beforeUnmount?: (dir: string) => Promise<void>;

  constructor(@Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig) {
    this.root = join(config.SANDBOX_STATE_DIR, 'sessions');
    this.requestsRoot = join(config.SANDBOX_STATE_DIR, 'requests');
  }

  get quotaBytes(): number {
    return this.config.SANDBOX_SESSION_QUOTA_MB * 1024 * 1024;
  }

  /** How long an upload's staging file waits for its next piece before it counts as cut off. */
  get uploadAbandonedMs(): number {
    return this.config.SANDBOX_UPLOAD_ABANDONED_S * 1000;
  }

  /** Set once at boot by the placement (sessions across replicas). */
  setHooks(hooks: WorkspaceHooks): void {
    this.hooks = hooks;
  }

  /** The workspace's name shared by every replica: `<kind>.<H(tenant)>.<H(tenant, session)>` (hashes as on disk). */
  keyOf(ref: WorkspaceRef): string {
    const { tenantHash, sessionHash } = this.locate(ref);
    return `${ref.scope === 'request' ? 'request' : 'session'}.${tenantHash}.${sessionHash}`;
  }

  /** The key filter of all a tenant's workspaces, sessions and request workspaces: `*.<H(tenant)>.*`. */
  tenantKeysFilter(tenant: string): string {
    return `*.${this.locate({ tenant, session: '' }).tenantHash}.*`;
  }

  /** The `<kind>.<H(tenant)>.` prefix of a tenant's session keys. */
  tenantKeyPrefix(tenant: string): string {
    return `session.${this.locate({ tenant, session: '' }).tenantHash}.`;
  }

  /**
   * Whether this replica's disk has a session volume made before placement existed (to adopt as
   * it is). A copy made or restored since is not one: with no record left in the placement, its
   * session was deleted or expired elsewhere and must not come back.
   */
  async hasUnplacedVolume(ref: WorkspaceRef): Promise<boolean> {
    assertSessionId(ref.session);
    if (ref.scope === 'request') return false;
    const { image, record } = this.locate(ref);
    const exists = await access(image).then(
      () => true,
      () => false,
    );
    return exists && (await readRecord(record))?.placed !== true;
  }

  /**
   * Replaces this replica's copy of a workspace by a fresh volume that `fill` fills (a restore
   * from the saved copy), in the volume's chain. Refused while a call here holds the old copy.
   */
  async replaceWith(ref: WorkspaceRef, fill: (mountPoint: string) => Promise<void>): Promise<void> {
    assertSessionId(ref.session);
    const { dir, image, mountPoint, record } = this.locate(ref);
    await this.onEntry(mountPoint, async (e) => {
      if (e.refs > 0) throw new SandboxError('unavailable', 'the session is busy on this replica; retry', true);
      clearTimeout(e.idle);
      e.idle = undefined;
      e.gone = false;
      e.knownUsage = undefined;
      // A request's tmpfs workspace is replaced by a volume at the usual mount point (users find
      // it there once the slot is gone).
      if (e.slot) {
        await this.unmountSlot(e.slot);
        e.slot = undefined;
        e.tmpfs = false;
        e.mounted = false;
      }
      if (e.mounted) {
        // The runtime's prepared containers on the old volume go first: one left bound to it would
        // run the next call on the replaced files, and its changes would never be saved (chaos
        // runs 2 and 3: a replica taking back its own session after NATS restarted lost a run).
        await this.beforeUnmount?.(mountPoint).catch(() => undefined);
        await unmountVolume(mountPoint);
        e.mounted = false;
      }
      await unlink(image).catch(() => undefined);
      // Marked placed before the volume exists: a crash midway leaves nothing to adopt as unplaced.
      if (ref.scope !== 'request') {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        const found = await readRecord(record);
        await writeRecord(record, { id: ref.session, created_at_ms: found?.created_at_ms ?? Date.now(), bytes: found?.bytes ?? 0, placed: true });
      }
      await this.createVolumeIn(dir, image);
      try {
        await mountVolume(image, mountPoint);
        e.mounted = true;
        await fill(mountPoint);
      } catch (err) {
        // Half a restore is worse than none: the next call restores again.
        if (e.mounted) await unmountVolume(mountPoint);
        e.mounted = false;
        await unlink(image).catch(() => undefined);
        throw err;
      }
      e.idle = setTimeout(() => void this.unmountIdle(e, mountPoint), IDLE_UNMOUNT_MS);
      e.idle.unref();
    });
  }

  onBeforeUnmount(fn: (dir: string) => Promise<void>): void {
    this.beforeUnmount = fn;
  }

  /**
   * Unmounts volumes a previous process left mounted. A request workspace that was a tmpfs died
   * with that process: its empty marker goes too (the workspace no longer exists).
   */
  async recover(): Promise<void> {
    for (const root of [this.root, this.requestsRoot]) {
      await mkdir(root, { recursive: true, mode: 0o700 });
      for (const mountPoint of await mountsUnder(root)) await unmountVolume(mountPoint);
    }
    for (const tenantDir of await readdir(this.requestsRoot).catch(() => [] as string[])) {
      const dir = join(this.requestsRoot, tenantDir);
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!name.endsWith('.img')) continue;
        const image = join(dir, name);
        if ((await stat(image).catch(() => undefined))?.size === 0) await unlink(image).catch(() => undefined);
      }
    }
  }

  /**
   * Mounts the session's volume (creating it on first use) and holds it until release(). Every
   * acquire and release marks the volume used (touch()), which is what the idle sweep reads: a
   * session only read from is as alive as one written to.
   */
  async acquire(ref: WorkspaceRef, options: { create: boolean; fresh?: () => Promise<string | undefined>; readOnly?: boolean }): Promise<SessionWorkspace | undefined> {
    assertSessionId(ref.session);
    const { dir, image, mountPoint, record } = this.locate(ref);
    let e!: Entry;
    let fresh = false;
    let use = 0;
    let alone = false;
    const mounted = await this.onEntry(mountPoint, async (entry) => {
      e = entry;
      if (e.gone) {
        // Deleted (or expired) while this call waited for it: a read finds nothing, as it would a
        // moment later; a call that would create it fails rather than recreate it.
        if (!options.create) return false;
        throw new SandboxError('invalid_session', 'the workspace was deleted', false, { param: 'session' });
      }
      clearTimeout(e.idle);
      e.idle = undefined;
      if (!e.mounted) {
        // A new request's workspace from a prepared tmpfs: nothing to format or mount on the way.
        // Its empty marker is made first: that one call (`wx`) also says it did not exist.
        const marked = options.create && ref.scope === 'request' && options.fresh !== undefined && (await this.markNewRequest(dir, image));
        if (marked) {
          const slot = await options.fresh?.().catch(async (err: unknown) => {
            await unlink(image).catch(() => undefined);
            throw err;
          });
          if (slot) {
            Object.assign(e, { mounted: true, tmpfs: true, slot, usedAt: Date.now(), uses: 1, knownUsage: undefined });
            e.refs += 1;
            use = 1;
            fresh = true;
            return true;
          }
          // None ready: a volume, made the usual way.
          await unlink(image);
        }
        const exists =
          !marked &&
          (await access(image).then(
            () => true,
            () => false,
          ));
        if (!exists) {
          if (!options.create) return false;
          if (ref.scope === 'request') await this.createVolumeIn(dir, image);
          else await this.createSessionVolume(dir, image, record, ref);
        }
        await mountVolume(image, mountPoint);
        e.mounted = true;
        e.knownUsage = undefined;
        // An upload cut off (its gateway died) gives its room back at the volume's next mount too,
        // so a session used only by runs since does not keep it (one lstat when there is none).
        if (exists) await sweepAbandonedUploads(mountPoint, this.uploadAbandonedMs).catch(() => undefined);
        // A session made before volumes had records gets one at its next use, so it is listed.
        if (ref.scope !== 'request' && exists) await this.ensureRecord(record, image, ref.session, !!this.hooks).catch(() => undefined);
      }
      this.touch(e, image);
      alone = e.refs === 0;
      e.refs += 1;
      use = e.uses = (e.uses ?? 0) + 1;
      return true;
    });
    if (!mounted) return undefined;
    let released = false;
    const path = e.slot ?? mountPoint;
    return {
      path,
      fresh,
      usage: async () => {
        const known = e.knownUsage;
        if (alone && known?.at === use - 1) return known.value;
        const value = await volumeUsage(path);
        // Nobody else holds it or has acquired it since this holder did, and this one writes nothing.
        if (options.readOnly && !released && e.refs === 1 && e.uses === use && e.mounted) e.knownUsage = { at: use, value };
        return value;
      },
      release: async () => {
        if (released) return;
        released = true;
        await this.serialize(e, async () => {
          e.refs -= 1;
          if (e.refs === 0 && e.removeOnRelease) {
            await this.removeNow(e, mountPoint, image, this.keyOf(ref));
          } else if (e.refs === 0) {
            // The listing's bytes: bookkeeping nothing on the call's path reads, noted after its answer.
            if (ref.scope !== 'request') this.afterAnswer(e, () => recordUsage(record, mountPoint));
            // Idle time counts from the end of the last use, not its start (a run can be long).
            this.touch(e, image);
            if (!e.tmpfs) {
              e.idle = setTimeout(() => void this.unmountIdle(e, mountPoint), IDLE_UNMOUNT_MS);
              e.idle.unref();
            }
          }
        });
      },
    };
  }

  /** Makes a request workspace's empty marker; false if its image exists already. */
  private async markNewRequest(dir: string, image: string): Promise<boolean> {
    if (!this.madeDirs.has(dir)) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      this.madeDirs.add(dir);
    }
    return writeFile(image, '', { mode: 0o600, flag: 'wx' }).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'EEXIST') return false;
        throw err;
      },
    );
  }

  /**
   * Marks the workspace used now. Every acquire and release does, and the idle sweep reads it: in
   * the entry at once (the sweep runs in the same chain, so it can never see a use older than the
   * last release), and in the image's mtime once the current call's answer has left (one write
   * per call, off its path; a process that restarts, or another on this state dir, reads that).
   */
  private touch(e: Entry, image: string): void {
    e.usedAt = Date.now();
    if (e.markPending) return;
    e.markPending = true;
    void untilAnswered().then(() => {
      e.markPending = false;
      // Not fatal: the entry keeps the time while this process lives, and the next use marks again.
      return markUsed(image).catch(() => undefined);
    });
  }

  /** Runs `fn` in the entry's chain once the current call's answer has left, if its volume is still mounted then. */
  private afterAnswer(e: Entry, fn: () => Promise<void>): void {
    void untilAnswered().then(() =>
      this.serialize(e, async () => {
        if (e.mounted && !e.gone) await fn().catch(() => undefined);
      }),
    );
  }

  private async unmountSlot(slot: string): Promise<void> {
    await this.beforeUnmount?.(slot).catch(() => undefined);
    await unmountVolume(slot);
    await rm(slot, { recursive: true, force: true }).catch(() => undefined);
  }

  private async createVolumeIn(dir: string, image: string): Promise<void> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await createVolume(image, this.quotaBytes);
  }

  /**
   * A new session volume, unless the tenant (its directory) already holds the most it may. The
   * count and the create happen under one per-tenant lock: parallel creates in this process queue
   * instead of all counting the same number. Replicas sharing a state dir could still overshoot
   * by one each; the cap bounds disk use, it is not a bill.
   */
  private async createSessionVolume(dir: string, image: string, record: string, ref: WorkspaceRef): Promise<void> {
    const session = ref.session;
    const newLock = (): Chain => ({ chain: Promise.resolve(), users: 0 });
    await this.inQueue(this.tenantCreates, dir, newLock, async () => {
      const max = this.config.SANDBOX_MAX_SESSIONS_PER_TENANT;
      // Across replicas the placement counted them (this disk holds only some, and stale copies).
      const held = this.hooks ? 0 : (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.img')).length;
      if (held >= max) throw sessionLimitReached(held, max, this.config.SANDBOX_SESSION_MAX_IDLE_S);
      // The record first: a volume without one would be taken, after a crash, for one made before
      // placement existed (and one nobody could list would still count against the cap).
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeRecord(record, { id: session, created_at_ms: Date.now(), bytes: 0, placed: !!this.hooks });
      try {
        await this.createVolumeIn(dir, image);
      } catch (err) {
        await unlink(record).catch(() => undefined);
        throw err;
      }
    });
  }

  /** Writes the record of a volume that has none (made before records existed). */
  private async ensureRecord(record: string, image: string, session: string, placed = false): Promise<void> {
    const found = await readRecord(record);
    if (found && (found.placed || !placed)) return;
    const st = await stat(image);
    await writeRecord(record, { id: session, created_at_ms: found?.created_at_ms ?? (st.birthtimeMs || st.ctimeMs), bytes: found?.bytes ?? 0, placed: placed || undefined });
  }

  /**
   * Deletes a workspace and its volume. In use (a run or a file call holds it), it is deleted
   * when the last one lets go; a user already waiting for it then fails instead of recreating it.
   */
  async remove(ref: WorkspaceRef): Promise<boolean> {
    assertSessionId(ref.session);
    const { image, mountPoint } = this.locate(ref);
    return this.onEntry(mountPoint, async (e) => {
      if (e.gone) return false;
      if (e.refs > 0) {
        e.removeOnRelease = true;
        return true;
      }
      return this.removeNow(e, mountPoint, image, this.keyOf(ref));
    });
  }

  /**
   * Drops this disk's copy of a workspace whose record is gone (deleted or expired on another
   * replica), without telling the placement (it is the caller). A copy in use goes when released.
   */
  async discardCopy(ref: WorkspaceRef): Promise<void> {
    assertSessionId(ref.session);
    const { image, mountPoint } = this.locate(ref);
    // A stat, synchronous: it is on a new request workspace's path before its run starts, and the
    // thread pool's round trip of the asynchronous one costs more than the stat itself.
    if (!existsSync(image)) return;
    await this.onEntry(mountPoint, async (e) => {
      if (e.gone) return;
      if (e.refs > 0) e.removeOnRelease = true;
      else await this.removeNow(e, mountPoint, image, undefined);
    });
  }

  /** Runs inside the entry's chain with no user left. */
  private async removeNow(e: Entry, mountPoint: string, image: string, key: string | undefined): Promise<boolean> {
    clearTimeout(e.idle);
    e.idle = undefined;
    if (e.slot) {
      await this.unmountSlot(e.slot);
      e.slot = undefined;
      e.mounted = false;
    }
    if (e.mounted) {
      await this.beforeUnmount?.(mountPoint).catch(() => undefined);
      await unmountVolume(mountPoint);
      e.mounted = false;
    }
    await rmdir(mountPoint).catch(() => undefined);
    const existed = await unlink(image).then(
      () => true,
      () => false,
    );
    await unlink(image.replace(/\.img$/, '.json')).catch(() => undefined);
    e.gone = true;
    if (this.entries.get(mountPoint) === e) this.entries.delete(mountPoint);
    // Its record and saved copy (if this replica holds it): a deleted or expired session is gone everywhere.
    if (key !== undefined) await this.hooks?.volumeRemoved(key);
    return existed;
  }

  /** Runs `fn` in the volume's chain, on its entry (made if needed), counted as a user of it. */
  private onEntry<T>(mountPoint: string, fn: (e: Entry) => Promise<T>): Promise<T> {
    const newEntry = (): Entry => ({ refs: 0, mounted: false, users: 0, chain: Promise.resolve() });
    return this.inQueue(this.entries, mountPoint, newEntry, fn, unheld);
  }

  /**
   * Runs `fn` in the chain `map` keeps under `key` (made if needed), counted as one of its users;
   * the chain leaves the map once no call uses it and `idle` says nothing else keeps it.
   */
  private async inQueue<Q extends Chain, T>(map: Map<string, Q>, key: string, make: () => Q, fn: (q: Q) => Promise<T>, idle: (q: Q) => boolean = () => true): Promise<T> {
    let found = map.get(key);
    if (!found) {
      found = make();
      map.set(key, found);
    }
    const q = found;
    q.users += 1;
    try {
      return await this.serialize(q, () => fn(q));
    } finally {
      q.users -= 1;
      if (q.users === 0 && idle(q) && map.get(key) === q) map.delete(key);
    }
  }

  private dropIfUnused(mountPoint: string, e: Entry): void {
    if (e.users === 0 && unheld(e) && this.entries.get(mountPoint) === e) this.entries.delete(mountPoint);
  }

  /** Volumes this process keeps an entry for (mounted, held, or being worked on). */
  get trackedVolumes(): number {
    return this.entries.size;
  }

  private async unmountIdle(e: Entry, mountPoint: string): Promise<void> {
    await this.serialize(e, async () => {
      // A tmpfs workspace's files live only in it: it stays until deleted or swept.
      if (e.refs > 0 || !e.mounted || e.tmpfs) return;
      await this.beforeUnmount?.(mountPoint).catch(() => undefined);
      await unmountVolume(mountPoint);
      e.mounted = false;
      e.knownUsage = undefined;
    });
    this.dropIfUnused(mountPoint, e);
  }

  /**
   * Starts removing workspaces nobody has used for their maximum idle time: request workspaces left
   * behind (SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S) and abandoned sessions (SANDBOX_SESSION_MAX_IDLE_S).
   */
  startSweeping(onError: (err: unknown) => void): void {
    if (this.sweeper) return;
    const shortest = Math.min(...this.sweptKinds().map((k) => k.maxIdleMs));
    const every = Math.min(Math.max(shortest / 4, 1_000), 10 * 60_000);
    this.sweeper = setInterval(() => void this.sweepIdleWorkspaces().catch(onError), every);
    this.sweeper.unref();
  }

  /** Removes every workspace unused for longer than its kind's maximum idle time; returns how many. */
  async sweepIdleWorkspaces(): Promise<number> {
    let removed = 0;
    for (const { root, kind, maxIdleMs } of this.sweptKinds()) removed += await this.sweepIdleUnder(root, kind, maxIdleMs);
    return removed;
  }

  private sweptKinds(): { root: string; kind: string; maxIdleMs: number }[] {
    return [
      { root: this.requestsRoot, kind: 'request', maxIdleMs: this.config.SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S * 1000 },
      { root: this.root, kind: 'session', maxIdleMs: this.config.SANDBOX_SESSION_MAX_IDLE_S * 1000 },
    ].filter((k) => k.maxIdleMs > 0);
  }

  private async sweepIdleUnder(root: string, kind: string, maxIdleMs: number): Promise<number> {
    const mounted = new Set(await mountsUnder(root));
    // In use here, or mounted by another replica on this host (it is in use there).
    const inUse = (mountPoint: string, e: Entry | undefined) => (e?.refs ?? 0) > 0 || (!e?.mounted && mounted.has(mountPoint));
    let removed = 0;
    for (const tenantDir of await readdir(root).catch(() => [] as string[])) {
      const dir = join(root, tenantDir);
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!name.endsWith('.img')) continue;
        const image = join(dir, name);
        const mountPoint = image.replace(/\.img$/, '.mnt');
        if ((await idleMsOf(image, this.entries.get(mountPoint))) < maxIdleMs || inUse(mountPoint, this.entries.get(mountPoint))) continue;
        // Checked again in the volume's chain: an acquire queued before this one has marked it used.
        const gone = await this.onEntry(mountPoint, async (e) => {
          if (e.gone || inUse(mountPoint, e) || (await idleMsOf(image, e)) < maxIdleMs) return false;
          return this.removeNow(e, mountPoint, image, `${kind}.${tenantDir}.${name.slice(0, -'.img'.length)}`);
        });
        if (gone) removed += 1;
      }
    }
    return removed;
  }

  /** Unmounts every idle volume (in-flight users were drained before shutdown). */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all(
      [...this.entries.entries()].map(([mountPoint, e]) => {
        clearTimeout(e.idle);
        return this.unmountIdle(e, mountPoint);
      }),
    );
  }

  private locate({ tenant, session, scope }: WorkspaceRef) {
    const request = scope === 'request';
    const tenantHash = hash(`tenant\0${tenant}`);
    const sessionHash = hash(`${request ? 'request' : 'session'}\0${tenant}\0${session}`);
    const dir = join(request ? this.requestsRoot : this.root, tenantHash);
    return { tenantHash, sessionHash, dir, image: join(dir, `${sessionHash}.img`), mountPoint: join(dir, `${sessionHash}.mnt`), record: join(dir, `${sessionHash}.json`) };
  }

  private serialize<T>(queue: Chain, fn: () => Promise<T>): Promise<T> {
    const next = queue.chain.then(fn, fn);
    queue.chain = next.catch(() => undefined);
    return next;
  }
}

/** Nothing keeps the entry but its calls: no holder, nothing mounted. */
function unheld(e: Entry): boolean {
  return e.refs === 0 && !e.mounted;
}

/** Marks a volume used now (its image's mtime; writes through the loop device move it too). */
function markUsed(image: string): Promise<void> {
  const now = new Date();
  return utimes(image, now, now);
}

async function readRecord(path: string): Promise<SessionRecord | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = SessionRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces the record whole (a reader never sees half of it). */
async function writeRecord(path: string, record: SessionRecord): Promise<void> {
  const tmp = `${path}.tmp`;
  await writeFile(tmp, JSON.stringify(record), { mode: 0o600 });
  await rename(tmp, path);
}

/** Notes what the session's files take now (the listing's `bytes`); called in the volume's chain. */
async function recordUsage(record: string, mountPoint: string): Promise<void> {
  const rec = await readRecord(record);
  if (!rec) return;
  const { usedBytes } = await volumeUsage(mountPoint);
  if (usedBytes !== rec.bytes) await writeRecord(record, { ...rec, bytes: usedBytes });
}

/**
 * How long since the volume was last used; 0 if it is gone (nothing to sweep). Its entry's time
 * counts too: the image's mtime is written after the answer of the call that used it.
 */
function idleMsOf(image: string, e: Entry | undefined): Promise<number> {
  const sinceUse = e?.usedAt === undefined ? Number.POSITIVE_INFINITY : Date.now() - e.usedAt;
  return stat(image).then(
    (st) => Math.min(sinceUse, Date.now() - st.mtimeMs),
    () => 0,
  );
}

export function sessionLimitReached(held: number, max: number, maxIdleS: number): SandboxError {
  const expiry = maxIdleS > 0 ? `; a session unused for ${durationOf(maxIdleS)} is also deleted with its files` : '';
  // No subject name here: this message reaches API clients as it is.
  const howToFree = `reuse one of them (GET /v1/sessions lists them), or free one by deleting a session no longer needed (DELETE /v1/sessions/{id})${expiry}`;
  return new SandboxError(
    'session_limit_reached',
    `this tenant already holds ${held} sandbox sessions, the most it may keep (${max}); a new session cannot be created: ${howToFree}`,
    false,
    { param: 'session', sessions: held, max_sessions: max },
  );
}

function durationOf(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  return `${seconds} s`;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 40);
}
