import { createHash } from 'node:crypto';
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { SessionIdSchema } from '@drael/contracts';
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

interface Entry {
  refs: number;
  mounted: boolean;
  // Serializes mount/unmount of one volume.
  chain: Promise<unknown>;
  idle?: NodeJS.Timeout;
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
 * using one session id get two different volumes.
 */
@Injectable()
export class WorkspaceService implements OnApplicationShutdown {
  private readonly root: string;
  // One entry per volume touched by this process, never dropped: a dropped entry could let two
  // entries mount one volume twice. A few hundred bytes per session.
  private readonly entries = new Map<string, Entry>();

  constructor(@Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig) {
    this.root = join(config.SANDBOX_STATE_DIR, 'sessions');
  }

  get quotaBytes(): number {
    return this.config.SANDBOX_SESSION_QUOTA_MB * 1024 * 1024;
  }

  /** Unmounts volumes a previous process left mounted. */
  async recover(): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    for (const mountPoint of await mountsUnder(this.root)) await unmountVolume(mountPoint);
  }

  /** Mounts the session's volume (creating it on first use) and holds it until release(). */
  async acquire(tenant: string, session: string, options: { create: boolean }): Promise<SessionWorkspace | undefined> {
    assertSessionId(session);
    const { dir, image, mountPoint } = this.locate(tenant, session);
    const key = mountPoint;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { refs: 0, mounted: false, chain: Promise.resolve() };
      this.entries.set(key, entry);
    }
    const e = entry;
    const mounted = await this.serialize(e, async () => {
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
          if (e.refs === 0) {
            e.idle = setTimeout(() => void this.unmountIdle(e, mountPoint), IDLE_UNMOUNT_MS);
            e.idle.unref();
          }
        });
      },
    };
  }

  private unmountIdle(e: Entry, mountPoint: string): Promise<void> {
    return this.serialize(e, async () => {
      if (e.refs > 0 || !e.mounted) return;
      await unmountVolume(mountPoint);
      e.mounted = false;
    });
  }

  /** Unmounts every idle volume (in-flight users were drained before shutdown). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      [...this.entries.entries()].map(([mountPoint, e]) => {
        clearTimeout(e.idle);
        return this.unmountIdle(e, mountPoint);
      }),
    );
  }

  private locate(tenant: string, session: string) {
    const tenantHash = hash(`tenant\0${tenant}`);
    const sessionHash = hash(`session\0${tenant}\0${session}`);
    const dir = join(this.root, tenantHash);
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
