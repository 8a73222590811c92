import { spawn } from 'node:child_process';
import { SandboxError } from '../sandbox-error.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable } from '@nestjs/common';
import { SANDBOX_STORES, type SandboxStores } from '../placement/sandbox-stores.js';
import { objectNameOf, SessionPlacement } from '../placement/session-placement.service.js';
import { WorkspaceService, type WorkspaceRef } from './workspace.service.js';

// A save or restore moves at most one quota (256 MiB by default) through the local bus; far
// above what that takes, but bounded, so a wedged tar cannot hold a session forever.
const TAR_TIMEOUT_MS = 5 * 60_000;
// Object Store chunks of 512 KiB (the library's default is 128 KiB): a quarter of the round trips
// per save, still under NATS's default 1 MiB message size with headers.
const CHUNK_BYTES = 512 * 1024;
const HOST_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' };

/**
 * The durable copy of each workspace, in the JetStream Object Store every replica reaches: a tar
 * of its files, written after every call that may have changed them (a run, a write, a delete)
 * and before that call is answered, so a client that got an answer finds the files again on
 * whichever replica serves the session next. Restored by a replica that takes a session over.
 *
 * A tar of the files rather than the volume image: the image is a sparse file of the quota's size,
 * the files are usually far smaller; the volume itself (quota, nosymfollow) is remade on restore.
 */
@Injectable()
export class WorkspaceStore {
  // Saves of one workspace, one after the other: each tars the files as they are at its turn.
  private readonly saves = new Map<string, Promise<unknown>>();

  constructor(
    @Inject(SANDBOX_STORES) private readonly stores: SandboxStores,
    private readonly workspaces: WorkspaceService,
    private readonly placement: SessionPlacement,
  ) {}

  /** Saves the workspace this replica holds under `key` and notes the copy in its record. */
  save(ref: WorkspaceRef, key: string): Promise<void> {
    const prev = this.saves.get(key) ?? Promise.resolve();
    const next = prev.then(
      () => this.saveNow(ref, key),
      () => this.saveNow(ref, key),
    );
    const settled = next.catch(() => undefined);
    this.saves.set(key, settled);
    void settled.then(() => {
      if (this.saves.get(key) === settled) this.saves.delete(key);
    });
    return next;
  }

  private async saveNow(ref: WorkspaceRef, key: string): Promise<void> {
    const ws = await this.workspaces.acquire(ref, { create: false });
    // Deleted meanwhile (the call was a delete, or it expired): nothing to keep.
    if (!ws) return;
    const name = objectNameOf(key, this.stores.replicaId);
    let bytes: number;
    try {
      const tar = spawnTar(['--sparse', '--numeric-owner', '-C', ws.path, '-cf', '-', '.']);
      tar.child.stdin?.end();
      const source = Readable.toWeb(tar.child.stdout) as unknown as ReadableStream<Uint8Array>;
      await Promise.all([this.stores.workspaces.put({ name, options: { max_chunk_size: CHUNK_BYTES } }, source), tar.done]);
      bytes = (await ws.usage()).usedBytes;
    } finally {
      await ws.release();
    }
    const kept = await this.placement.recordUse(key, { object: name, bytes });
    if (kept === 'gone') await this.stores.workspaces.delete(name).catch(() => undefined);
  }

  /**
   * Replaces this replica's copy of the workspace by the saved copy `name`, or by an empty one
   * (`empty`: a session taken over before its first save; a copy on this disk is stale).
   */
  async restore(ref: WorkspaceRef, name: string, empty = false): Promise<void> {
    await this.workspaces.replaceWith(ref, async (mountPoint) => {
      if (empty) return;
      const obj = await this.stores.workspaces.get(name);
      // The record names a copy the store does not have: serving an empty or stale workspace
      // as if it were the session would be silent data loss; refuse instead.
      if (!obj) throw new SandboxError('unavailable', "the session's saved files cannot be read now; retry", true);
      const tar = spawnTar(['--numeric-owner', '--same-owner', '--same-permissions', '-C', mountPoint, '-xf', '-']);
      await Promise.all([pipeline(Readable.fromWeb(obj.data), tar.child.stdin), tar.done]);
      // The store checks the copy's digest once it has been read whole.
      const err = await obj.error;
      if (err) throw err;
    });
  }
}

/** tar with no shell in between and a bounded time; `done` rejects with its stderr on failure. */
function spawnTar(args: string[]) {
  const child = spawn('tar', args, { env: HOST_ENV, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), TAR_TIMEOUT_MS);
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`tar ${args.join(' ')}: ${stderr.trim() || `exit ${code ?? signal}`}`));
    });
  });
  return { child, done };
}
