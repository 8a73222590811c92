import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable } from '@nestjs/common';
import { SandboxError } from '../sandbox-error.js';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { SANDBOX_STORES, type SandboxStores } from '../placement/sandbox-stores.js';
import { SessionPlacement, type SessionRecord } from '../placement/session-placement.service.js';
import { TenantStoreBudget } from '../placement/tenant-store-budget.js';
import { WorkspaceService, type WorkspaceRef } from './workspace.service.js';
import {
  contentsOf,
  EMPTY_SUMMARY,
  ManifestSchema,
  openScanned,
  readChunks,
  holdsNothing,
  isEmptyDir,
  scanWorkspace,
  summaryOf,
  writeWorkspace,
  type Fingerprints,
  type Manifest,
  type ManifestSummary,
  type ScanLimits,
  type ScannedFile,
} from './workspace-manifest.js';

// Object Store chunks of 512 KiB (the library's default is 128 KiB): a quarter of the round trips
// per content, still under NATS's default 1 MiB message size with headers.
const CHUNK_BYTES = 512 * 1024;
// Contents uploaded (and downloaded) at once: overlaps the round trips of many small files.
const PARALLEL = 4;
// Workspaces whose last saved listing (its digest and contents) and file fingerprints this replica
// keeps in memory. Beyond it the oldest is dropped: its next save reads the manifest back and
// hashes every file again (uploading still only what changed).
const KNOWN_WORKSPACES = 256;
// A content whose bytes changed between hashing and upload (a run of the same session writing it
// meanwhile) is hashed and uploaded again, at most this many times.
const UPLOAD_ATTEMPTS = 3;
// A copy saved before manifests existed (a tar) is restored with tar, bounded in time.
const TAR_TIMEOUT_MS = 5 * 60_000;
const HOST_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' };

/** A save's listing, and what it did: nothing (unchanged), nothing ('gone': deleted), or a begun save to commit. */
interface Saved {
  summary: ManifestSummary;
  fingerprints: Fingerprints;
  begun?: 'gone' | { slot: string; interrupted: Interrupted; uploaded: Set<string> };
}

/** A save found begun and never committed: its manifest's name and the contents it named. */
interface Interrupted {
  name: string | undefined;
  contents: Set<string>;
}

/** A save's room in its tenant's budget of saved bytes, once reserved (TenantStoreBudget). */
interface Reservation {
  release?: (committed: boolean) => void;
  // The save committed: its record states the bytes reserved.
  committed: boolean;
}

/** What this replica knows of a workspace's latest saved copy. */
interface Known {
  object: string | undefined;
  summary: ManifestSummary;
  fingerprints: Fingerprints;
}

/**
 * The durable copy of each workspace, in the JetStream Object Store every replica reaches,
 * written after every call that may have changed the files (a run, a write, a delete) and before
 * that call is answered, so a client that got an answer finds its files again on whichever
 * replica serves the session next (issue 19). Restored by a replica that takes a session over.
 *
 * Incremental: each distinct file content is one object named by its SHA-256 under the
 * workspace's key (`<key>/c/<sha256>`), uploaded once; a save uploads the contents that are not
 * saved yet and a manifest listing every file (workspace-manifest.ts). Files are hashed only when
 * their fingerprint (inode, ctime, size) changed, so a small change to a large session reads and
 * uploads that change, not the session.
 *
 * Atomic: the manifest goes to one of two slots per replica (`<key>/m/<replica>/<0|1>`), never
 * the one the record names, and the save counts only once the record names it (compare-and-set,
 * like every record change: a replica that lost the session cannot commit). A reader (a replica
 * taking the session over) reads the record's manifest and the contents it names, so it never
 * sees half a save. Collected after a commit: the contents only the previous manifest named, and
 * whatever a save interrupted by a crash left (the record's `pending`, written before it began).
 *
 * Chunks of a single content whose upload the process died in the middle of are named by nothing
 * (the Object Store writes an object's name last; the library removes them itself when the upload
 * fails in a live process): CutUploadSweeper removes them after a grace period.
 */
@Injectable()
export class WorkspaceStore {
  // Saves of one workspace, one after the other: each lists the files as they are at its turn.
  private readonly saves = new Map<string, Promise<unknown>>();
  private readonly known = new Map<string, Known>();
  private readonly limits: ScanLimits;

  constructor(
    @Inject(SANDBOX_CONFIG) config: SandboxConfig,
    @Inject(SANDBOX_STORES) private readonly stores: SandboxStores,
    private readonly workspaces: WorkspaceService,
    private readonly placement: SessionPlacement,
    private readonly budget: TenantStoreBudget,
  ) {
    placement.onDiscard((key, record) => this.discard(key, record));
    this.limits = { maxEntries: config.SANDBOX_WORKSPACE_MAX_ENTRIES, maxPathBytes: config.SANDBOX_WORKSPACE_MAX_PATH_MB * 1024 * 1024 };
  }

  /**
   * Saves the workspace this replica holds under `key` and notes the copy in its record; resolves
   * once the save is committed. What it made garbage is collected after that, off the caller's
   * path, but before the workspace's next save begins (which could otherwise upload a content
   * again while it is being deleted).
   */
  save(ref: WorkspaceRef, key: string): Promise<void> {
    const prev = this.saves.get(key) ?? Promise.resolve();
    const committed = prev.then(
      () => this.saveNow(ref, key),
      () => this.saveNow(ref, key),
    );
    const settled = committed.then((collect) => collect?.()).catch(() => undefined);
    this.saves.set(key, settled);
    void settled.then(() => {
      if (this.saves.get(key) === settled) this.saves.delete(key);
    });
    return committed.then(() => undefined);
  }

  /** The save; returns the collection of what it made garbage, if it committed. */
  private async saveNow(ref: WorkspaceRef, key: string): Promise<(() => Promise<void>) | undefined> {
    // The room this save reserves in its tenant's budget of saved bytes: given back however it ends.
    const reservation: Reservation = { committed: false };
    try {
      return await this.saveReserving(ref, key, reservation);
    } finally {
      reservation.release?.(reservation.committed);
    }
  }

  private async saveReserving(ref: WorkspaceRef, key: string, reservation: Reservation): Promise<(() => Promise<void>) | undefined> {
    const copy = this.placement.savedCopyOf(key);
    // Not held here any more (deleted meanwhile, or moved): nothing of ours to save.
    if (!copy) return undefined;
    const prev = await this.knownOf(key, copy.object);
    // It reads only: the size it reads can serve the next run's quota check (WorkspaceService).
    const ws = await this.workspaces.acquire(ref, { create: false, readOnly: true });
    // Deleted meanwhile (the call was a delete, or it expired): nothing to keep.
    if (!ws) return undefined;
    let saved: Saved;
    let bytes: number;
    let heldPastAnswer = false;
    try {
      saved = await this.uploadChanges(ws.path, key, prev, ref.tenant, reservation);
      if (!saved.begun) {
        // Nothing changed, so nothing can be lost: only its last use and size are noted, once the
        // answer has left (a KV round trip and a statfs fewer on the path of a run that wrote
        // nothing). The workspace stays held until then, so its size is read from it, mounted.
        this.remember(key, { ...prev, fingerprints: saved.fingerprints });
        heldPastAnswer = true;
        this.placement.recordUseAfterAnswer(key, async () => {
          try {
            return (await ws.usage()).usedBytes;
          } finally {
            await ws.release();
          }
        });
        return undefined;
      }
      bytes = (await ws.usage()).usedBytes;
    } finally {
      if (!heldPastAnswer) await ws.release();
    }
    const { summary, fingerprints, begun } = saved;
    if (begun === 'gone') return undefined; // deleted before the save began: nothing was uploaded
    const { slot, interrupted, uploaded } = begun;
    const kept = await this.placement.recordUse(key, { object: slot, bytes, saved_bytes: summary.savedBytes });
    if (kept === 'gone') {
      // Deleted while it was saved: what this save uploaded is nobody's.
      await this.removeAll([...[...uploaded].map((h) => this.contentName(key, h)), slot]);
      return undefined;
    }
    reservation.committed = true;
    this.remember(key, { object: slot, summary, fingerprints });
    // Committed: collect what only the previous copy (or an interrupted save) named.
    const keep = summary.contents;
    const garbage = new Set<string>();
    for (const h of [...prev.summary.contents, ...interrupted.contents, ...uploaded]) if (!keep.has(h)) garbage.add(this.contentName(key, h));
    // Another replica's manifests (both its slots: the one before its last is stale too), not
    // this replica's own (the record names one, the next save overwrites the other).
    for (const name of [prev.object, interrupted.name]) for (const slot of name === undefined ? [] : this.slotsBeside(key, name)) if (!this.isOwnSlot(key, slot)) garbage.add(slot);
    return () => this.removeAll([...garbage]);
  }

  /**
   * Lists the workspace and, if anything changed since the saved copy `prev`, notes the save in
   * the record (pending), writes its manifest to this replica's free slot, then uploads the
   * contents not saved yet. Not committed: the caller does that once the workspace is released.
   */
  private async uploadChanges(root: string, key: string, prev: Known, tenant: string, reservation: Reservation): Promise<Saved> {
    const saved = prev.summary.contents;
    const slot = this.slotFor(key, prev.object);
    const uploaded = new Set<string>();
    let interrupted: Interrupted | undefined;
    // Never saved and still empty (a fresh request workspace after a run that wrote nothing): one
    // look at its root instead of a listing (see below).
    if (prev.object === undefined && isEmptyDir(root)) return { summary: prev.summary, fingerprints: prev.fingerprints };
    for (let attempt = 1; ; attempt++) {
      // Past the workspace's limits the scan throws quota_exceeded before it holds them: nothing is
      // saved, the files stay on this disk as they are, and the record still names the last copy.
      const { manifest, digest, fingerprints, files } = await scanWorkspace(root, prev.fingerprints, this.limits);
      if (digest === prev.summary.digest) return { summary: prev.summary, fingerprints };
      // Never saved and still empty (a fresh request workspace after a run that wrote nothing):
      // nothing to keep, as a takeover before the first save starts empty. Only its root's own
      // mode and time would differ, which no saved copy is made for.
      if (prev.object === undefined && holdsNothing(manifest)) return { summary: prev.summary, fingerprints };
      const summary = summaryOf(manifest, digest);
      if (!interrupted) {
        // Room in the tenant's budget for what the copy grows by, before anything is uploaded: a
        // save past it is refused here, the files staying on this disk as they are.
        reservation.release = await this.budget.reserve(tenant, summary.savedBytes - prev.summary.savedBytes);
        const before = await this.placement.recordPending(key, slot);
        if (before === 'gone') return { summary, fingerprints, begun: 'gone' };
        // A save begun before and never committed (its replica died): read what it named before
        // the slot it used may be overwritten below.
        const name = before.pending !== undefined && before.pending !== prev.object ? before.pending : undefined;
        const named = name !== undefined && this.isManifestName(key, name) ? await this.readManifest(name).catch(() => undefined) : undefined;
        interrupted = { name, contents: named ? contentsOf(named) : new Set() };
      }
      // The manifest before the contents: an interrupted save's `pending` names all it uploaded.
      await this.putManifest(slot, manifest);
      const fresh = [...files].filter(([h]) => !saved.has(h) && !uploaded.has(h));
      const changed = await this.uploadContents(key, fresh, uploaded);
      if (!changed) return { summary, fingerprints, begun: { slot, interrupted, uploaded } };
      // A content changed under its upload (a concurrent run of the session wrote it): list
      // again, so that the manifest names what was really uploaded.
      if (attempt >= UPLOAD_ATTEMPTS) throw new SandboxError('unavailable', "the session's files kept changing while they were saved; retry", true);
    }
  }

  /** Uploads each content under its hash (noted in `uploaded`); true if one turned out changed since it was hashed. */
  private async uploadContents(key: string, files: [string, ScannedFile][], uploaded: Set<string>): Promise<boolean> {
    let changed = false;
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const [hash, file] = files[next++]!;
        const fh = await openScanned(file.abs, file.ino).catch(() => undefined);
        if (!fh) {
          // Removed or replaced since the listing: listed again.
          changed = true;
          continue;
        }
        const sha = createHash('sha256');
        try {
          const source = Readable.toWeb(
            Readable.from(
              (async function* () {
                for await (const chunk of readChunks(fh)) {
                  sha.update(chunk);
                  yield chunk;
                }
              })(),
            ),
          ) as unknown as ReadableStream<Uint8Array>;
          await this.stores.workspaces.put({ name: this.contentName(key, hash), options: { max_chunk_size: CHUNK_BYTES } }, source);
        } finally {
          await fh.close();
        }
        if (sha.digest('hex') === hash) uploaded.add(hash);
        else {
          changed = true;
          await this.stores.removeObject(this.contentName(key, hash)).catch(() => undefined);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, files.length) }, worker));
    return changed;
  }

  /**
   * Replaces this replica's copy of the workspace by the saved copy `object` (a manifest), or by an
   * empty one (undefined: a session taken over before its first save; a copy on this disk is stale).
   */
  async restore(ref: WorkspaceRef, key: string, object: string | undefined): Promise<void> {
    this.known.delete(key);
    let filled: Known = { object, summary: EMPTY_SUMMARY, fingerprints: new Map() };
    await this.workspaces.replaceWith(ref, async (mountPoint) => {
      if (object === undefined) return;
      if (!this.isManifestName(key, object)) return this.restoreTar(object, mountPoint);
      const manifest = await this.readManifest(object);
      const fingerprints = await writeWorkspace(mountPoint, manifest, (hash) => this.contentOf(key, hash), PARALLEL);
      filled = { object, summary: summaryOf(manifest), fingerprints };
    });
    this.remember(key, filled);
  }

  /** A copy saved before manifests existed: one tar of the whole workspace. Its first save replaces it. */
  private async restoreTar(object: string, mountPoint: string): Promise<void> {
    const obj = await this.stores.workspaces.get(object);
    if (!obj) throw savedCopyMissing();
    const tar = spawnTar(['--numeric-owner', '--same-owner', '--same-permissions', '-C', mountPoint, '-xf', '-']);
    await Promise.all([pipeline(Readable.fromWeb(obj.data), tar.child.stdin), tar.done]);
    const err = await obj.error;
    if (err) throw err;
  }

  private async contentOf(key: string, hash: string): Promise<AsyncIterable<Uint8Array>> {
    const obj = await this.stores.workspaces.get(this.contentName(key, hash));
    if (!obj) throw savedCopyMissing();
    return (async function* () {
      yield* Readable.fromWeb(obj.data) as AsyncIterable<Uint8Array>;
      // The store checks the content's digest once it has been read whole.
      const err = await obj.error;
      if (err) throw err;
    })();
  }

  /** What this replica knows of the saved copy `object`, read back from the store if it forgot. */
  private async knownOf(key: string, object: string | undefined): Promise<Known> {
    const known = this.known.get(key);
    if (known && known.object === object) return known;
    if (object === undefined) return { object, summary: EMPTY_SUMMARY, fingerprints: new Map() };
    // A tar from before manifests: every content is uploaded at the next save.
    const summary = this.isManifestName(key, object) ? summaryOf(await this.readManifest(object)) : EMPTY_SUMMARY;
    return { object, summary, fingerprints: new Map() };
  }

  private remember(key: string, known: Known): void {
    this.known.delete(key);
    this.known.set(key, known);
    if (this.known.size > KNOWN_WORKSPACES) this.known.delete(this.known.keys().next().value!);
  }

  /** Deleted or expired: every saved object of the workspace goes. */
  private async discard(key: string, record: SessionRecord): Promise<void> {
    this.known.delete(key);
    const names = new Set<string>([this.slotName(key, 0), this.slotName(key, 1)]);
    for (const object of [record.object, record.pending]) {
      if (object === undefined) continue;
      for (const slot of this.slotsBeside(key, object)) names.add(slot);
      if (!this.isManifestName(key, object)) continue;
      const manifest = await this.readManifest(object).catch(() => undefined);
      for (const h of manifest ? contentsOf(manifest) : []) names.add(this.contentName(key, h));
    }
    await this.removeAll([...names]);
  }

  private async readManifest(object: string): Promise<Manifest> {
    const obj = await this.stores.workspaces.get(object);
    // The record names a copy the store does not have: serving an empty or stale workspace as if
    // it were the session would be silent data loss; refuse instead.
    if (!obj) throw savedCopyMissing();
    const chunks: Uint8Array[] = [];
    for await (const chunk of Readable.fromWeb(obj.data) as AsyncIterable<Uint8Array>) chunks.push(chunk);
    const err = await obj.error;
    if (err) throw err;
    return ManifestSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
  }

  private async putManifest(slot: string, manifest: Manifest): Promise<void> {
    await this.stores.workspaces.putBlob({ name: slot, options: { max_chunk_size: CHUNK_BYTES } }, Buffer.from(JSON.stringify(manifest)));
  }

  private async removeAll(names: string[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < names.length) await this.stores.removeObject(names[next++]!).catch(() => undefined);
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, names.length) }, worker));
  }

  private contentName(key: string, hash: string): string {
    return `${key}/c/${hash}`;
  }

  private slotName(key: string, n: 0 | 1): string {
    return `${key}/m/${this.stores.replicaId}/${n}`;
  }

  /** The slot the next manifest goes to: this replica's slot the record does not name. */
  private slotFor(key: string, committed: string | undefined): string {
    return committed === this.slotName(key, 0) ? this.slotName(key, 1) : this.slotName(key, 0);
  }

  /** A saved copy's name with its replica's other slot, if it is a manifest slot. */
  private slotsBeside(key: string, object: string): string[] {
    const slot = /^(.*\/)([01])$/.exec(object);
    return slot && this.isManifestName(key, object) ? [object, `${slot[1]}${slot[2] === '0' ? '1' : '0'}`] : [object];
  }

  private isOwnSlot(key: string, object: string): boolean {
    return object === this.slotName(key, 0) || object === this.slotName(key, 1);
  }

  private isManifestName(key: string, object: string): boolean {
    return object.startsWith(`${key}/m/`);
  }
}

function savedCopyMissing(): SandboxError {
  return new SandboxError('unavailable', "the session's saved files cannot be read now; retry", true);
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
