import { createHash } from 'node:crypto';
import { access, mkdir, readdir, rmdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { SessionIdSchema, type WorkspaceScope } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { createVolume, mountVolume, mountsUnder, unmountVolume, volumeUsage, type VolumeUsage } from './session-volume.js';

/**
 * A session counts as full once less than this much of its quota is free: the filesystem keeps
 * some slack below its size (a partial block, metadata), so "exactly zero left" never happens.
 * Runs are refused then, and a file write may not eat into it.
 */
export const QUOTA_HEADROOM_BYTES = 1024 * 1024;

/** A mounted session workspace; `release()` once done with it. */
export interface SessionWorkspace {
  readonly path: string;
  usage(): Promise<VolumeUsage>;
  release(): Promise<void>;
}

/** Names one workspace: a tenant's session, or the workspace of one gateway request. */
export interface WorkspaceRef {
  readonly tenant: string;
  readonly session: string;
  readonly scope?: WorkspaceScope | undefined;
}

interface Entry {
  refs: number;
  mounted: boolean;
  // Serializes mount/unmount of one volume.
  chain: Promise<unknown>;
  idle?: NodeJS.Timeout;
  // Deleted while in use: the volume goes when its last user lets go.
  removeOnRelease?: boolean;
  // Deleted: the entry left the map; a user that was already waiting on it must not recreate it.
  gone?: boolean;
}

// A volume stays mounted this long after its last user, so a run followed by file calls (the
// usual pattern) does not pay an unmount + mount (and the flush between) each time.
const IDLE_UNMOUNT_MS = 20_000;

/** Refuses any session id outside ^[A-Za-z0-9_-]{1,64}$ before it comes near a path. */
export function assertSessionId(session: string): void {
  if (!SessionIdSchema.safeParse(session).success) {
    throw new RpcError('invalid_session', 'session id must match ^[A-Za-z0-9_-]{1,64}$', false, { param: 'session' });
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
  // One entry per volume touched by this process, dropped only when its volume is deleted: a
  // dropped entry of a live volume could let two entries mount it twice. A few hundred bytes each.
  private readonly entries = new Map<string, Entry>();
  private sweeper?: NodeJS.Timeout;

  constructor(@Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig) {
    this.root = join(config.SANDBOX_STATE_DIR, 'sessions');
    this.requestsRoot = join(config.SANDBOX_STATE_DIR, 'requests');
  }

  get quotaBytes(): number {
    return this.config.SANDBOX_SESSION_QUOTA_MB * 1024 * 1024;
  }

  /** Unmounts volumes a previous process left mounted. */
  async recover(): Promise<void> {
    for (const root of [this.root, this.requestsRoot]) {
      await mkdir(root, { recursive: true, mode: 0o700 });
      for (const mountPoint of await mountsUnder(root)) await unmountVolume(mountPoint);
    }
  }

  /** Mounts the session's volume (creating it on first use) and holds it until release(). */
  async acquire(ref: WorkspaceRef, options: { create: boolean }): Promise<SessionWorkspace | undefined> {
    assertSessionId(ref.session);
    const { dir, image, mountPoint } = this.locate(ref);
    const e = this.entryOf(mountPoint);
    const mounted = await this.serialize(e, async () => {
      if (e.gone) throw new RpcError('invalid_session', 'the workspace was deleted', false, { param: 'session' });
      clearTimeout(e.idle);
      e.idle = undefined;
      if (!e.mounted) {
        const exists = await access(image).then(
          () => true,
          () => false,
        );
        if (!exists) {
          if (!options.create) return false;
          await mkdir(dir, { recursive: true, mode: 0o700 });
          await createVolume(image, this.quotaBytes);
        }
        await mountVolume(image, mountPoint);
        e.mounted = true;
      }
      e.refs += 1;
      return true;
    });
    if (!mounted) return undefined;
    let released = false;
    return {
      path: mountPoint,
      usage: () => volumeUsage(mountPoint),
      release: async () => {
        if (released) return;
        released = true;
        await this.serialize(e, async () => {
          e.refs -= 1;
          if (e.refs === 0 && e.removeOnRelease) {
            await this.removeNow(e, mountPoint, image);
          } else if (e.refs === 0) {
            e.idle = setTimeout(() => void this.unmountIdle(e, mountPoint), IDLE_UNMOUNT_MS);
            e.idle.unref();
          }
        });
      },
    };
  }

  /**
   * Deletes a workspace and its volume. In use (a run or a file call holds it), it is deleted
   * when the last one lets go; a user already waiting for it then fails instead of recreating it.
   */
  async remove(ref: WorkspaceRef): Promise<boolean> {
    assertSessionId(ref.session);
    const { image, mountPoint } = this.locate(ref);
    const e = this.entryOf(mountPoint);
    return this.serialize(e, async () => {
      if (e.gone) return false;
      if (e.refs > 0) {
        e.removeOnRelease = true;
        return true;
      }
      return this.removeNow(e, mountPoint, image);
    });
  }

  /** Runs inside the entry's chain with no user left. */
  private async removeNow(e: Entry, mountPoint: string, image: string): Promise<boolean> {
    clearTimeout(e.idle);
    e.idle = undefined;
    if (e.mounted) {
      await unmountVolume(mountPoint);
      e.mounted = false;
    }
    await rmdir(mountPoint).catch(() => undefined);
    const existed = await unlink(image).then(
      () => true,
      () => false,
    );
    e.gone = true;
    if (this.entries.get(mountPoint) === e) this.entries.delete(mountPoint);
    return existed;
  }

  private entryOf(key: string): Entry {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { refs: 0, mounted: false, chain: Promise.resolve() };
      this.entries.set(key, entry);
    }
    return entry;
  }

  private unmountIdle(e: Entry, mountPoint: string): Promise<void> {
    return this.serialize(e, async () => {
      if (e.refs > 0 || !e.mounted) return;
      await unmountVolume(mountPoint);
      e.mounted = false;
    });
  }

  /** Starts removing request workspaces left behind (see SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S). */
  startSweeping(onError: (err: unknown) => void): void {
    if (this.sweeper) return;
    const maxAgeMs = this.config.SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S * 1000;
    const every = Math.min(Math.max(maxAgeMs / 4, 1_000), 10 * 60_000);
    this.sweeper = setInterval(() => void this.sweepRequestWorkspaces(maxAgeMs).catch(onError), every);
    this.sweeper.unref();
  }

  /** Removes request workspaces older than `maxAgeMs` that nobody uses; returns how many. */
  async sweepRequestWorkspaces(maxAgeMs: number): Promise<number> {
    const mounted = new Set(await mountsUnder(this.requestsRoot));
    let removed = 0;
    for (const tenantDir of await readdir(this.requestsRoot).catch(() => [] as string[])) {
      const dir = join(this.requestsRoot, tenantDir);
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!name.endsWith('.img')) continue;
        const image = join(dir, name);
        const mountPoint = image.replace(/\.img$/, '.mnt');
        const age = await stat(image).then(
          (st) => Date.now() - st.mtimeMs,
          () => 0,
        );
        const own = this.entries.get(mountPoint);
        // In use here, or mounted by another replica on this host: not left behind.
        if (age < maxAgeMs || (own ? own.refs > 0 : mounted.has(mountPoint))) continue;
        const e = this.entryOf(mountPoint);
        const gone = await this.serialize(e, () => (e.refs > 0 ? Promise.resolve(false) : this.removeNow(e, mountPoint, image)));
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
    return { dir, image: join(dir, `${sessionHash}.img`), mountPoint: join(dir, `${sessionHash}.mnt`) };
  }

  private serialize<T>(entry: Entry, fn: () => Promise<T>): Promise<T> {
    const next = entry.chain.then(fn, fn);
    entry.chain = next.catch(() => undefined);
    return next;
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 40);
}
