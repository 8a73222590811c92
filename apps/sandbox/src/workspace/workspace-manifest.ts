import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { constants, lstatSync, opendirSync, readlinkSync, type BigIntStats } from 'node:fs';
import { chmod, lchown, link, lstat, lutimes, mkdir, open, symlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { SandboxError } from '../sandbox-error.js';
import { UPLOAD_STAGING_DIR } from './upload-staging.js';

/*
 * A workspace's files as a list (the manifest) plus their contents (one object per distinct
 * content, named by its SHA-256): what workspace-store.ts saves to the Object Store. The list is
 * the whole workspace, so a file deleted since the last save is simply absent from it, and a
 * restore (a fresh volume filled from the list) never brings it back.
 *
 * Kept: regular files (content, sparse holes restored as holes), directories, symlinks (never
 * followed, here or anywhere on the volume), hard links (as links), and for each its mode, owner
 * and mtime. Not kept: FIFOs, sockets and device nodes (the volume is nodev; a FIFO is a
 * rendezvous between processes, all of which ended with their run).
 */

// A path inside the workspace as the manifest writes it: `.` (the workspace root) or relative
// segments, none empty, `.` or `..`: checked again on restore, so a damaged or forged manifest
// cannot name anything outside the fresh volume it fills.
const RelPath = z
  .string()
  .max(4096)
  .refine((p) => p === '.' || (!p.includes('\0') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..')), 'a relative path inside the workspace');
const Owner = { u: z.number().int().nonnegative(), g: z.number().int().nonnegative() };
const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

const EntrySchema = z.discriminatedUnion('t', [
  z.object({ t: z.literal('d'), p: RelPath, m: z.number().int(), mt: z.number(), ...Owner }),
  z.object({ t: z.literal('f'), p: RelPath, m: z.number().int(), mt: z.number(), s: z.number().int().nonnegative(), h: Sha256Hex, ...Owner }),
  z.object({ t: z.literal('l'), p: RelPath, to: z.string().max(4096), mt: z.number(), ...Owner }),
  // A second name of a regular file listed before it (a hard link), restored as a link to it.
  z.object({ t: z.literal('h'), p: RelPath, to: RelPath }),
]);
type ManifestEntry = z.infer<typeof EntrySchema>;

export const ManifestSchema = z.object({ v: z.literal(1), entries: z.array(EntrySchema) });
export type Manifest = z.infer<typeof ManifestSchema>;

export const EMPTY_MANIFEST: Manifest = { v: 1, entries: [] };

/**
 * What this replica last saw of the files: each fingerprint (inode, ctime, which no program can set
 * back, and size) with its content's hash. Same fingerprint, same content, whatever name the file
 * has now: its hash is reused without reading it. Keyed by the fingerprint, not the path, so that
 * what a replica keeps per workspace does not grow with how deep its paths are.
 */
export type Fingerprints = Map<string, string>;

// The kernel stamps ctime from a clock that advances by ticks (1-10 ms): a file changed again
// within the tick of the change a listing saw keeps its ctime. So a fingerprint taken less than
// this long after its file's ctime is not kept (the file is hashed again next time), as git does
// with its "racily clean" entries.
const RACY_MS = 100;

function fingerprintOf(st: BigIntStats, takenAtMs: number): string | undefined {
  return takenAtMs - Number(st.ctimeNs / 1_000_000n) > RACY_MS ? `${st.ino}:${st.ctimeNs}:${st.size}` : undefined;
}

/** The content hashes a manifest refers to (each is one object in the store). */
export function contentsOf(manifest: Manifest): Set<string> {
  const hashes = new Set<string>();
  for (const e of manifest.entries) if (e.t === 'f') hashes.add(e.h);
  return hashes;
}

/** What a saved copy of this listing holds in the Object Store: each distinct content once, at its size. */
export function savedBytesOf(manifest: Manifest): number {
  const seen = new Set<string>();
  let bytes = 0;
  for (const e of manifest.entries) {
    if (e.t !== 'f' || seen.has(e.h)) continue;
    seen.add(e.h);
    bytes += e.s;
  }
  return bytes;
}

/** A listing of an empty workspace: its root directory and nothing in it. */
export function holdsNothing(m: Manifest): boolean {
  return m.entries.every((e) => e.p === '.');
}

/**
 * A listing's SHA-256 over its entries, one JSON line each: two listings with the same digest list
 * the same files. Fed one entry at a time while a scan lists them, so telling whether anything
 * changed never stringifies a whole manifest (a tree at PATH_MAX depth made that 1.6 s of the event
 * loop for 16,000 entries) and a replica keeps 64 characters per saved copy, not its listing.
 */
class ManifestDigest {
  private readonly sha = createHash('sha256');

  add(e: ManifestEntry): void {
    // Keys in the schema's order (the scan writes them so, zod parses them so).
    this.sha.update(JSON.stringify(e));
    this.sha.update('\n');
  }

  digest(): string {
    return this.sha.digest('hex');
  }
}

export function digestOf(manifest: Manifest): string {
  const d = new ManifestDigest();
  for (const e of manifest.entries) d.add(e);
  return d.digest();
}

/** What a replica keeps of a saved listing: its digest, the contents it names and what they take. */
export interface ManifestSummary {
  digest: string;
  contents: Set<string>;
  savedBytes: number;
}

export function summaryOf(manifest: Manifest, digest = digestOf(manifest)): ManifestSummary {
  return { digest, contents: contentsOf(manifest), savedBytes: savedBytesOf(manifest) };
}

export const EMPTY_SUMMARY: ManifestSummary = summaryOf(EMPTY_MANIFEST);

/**
 * How much a workspace may hold for a save (SANDBOX_WORKSPACE_MAX_ENTRIES,
 * SANDBOX_WORKSPACE_MAX_PATH_MB): names found (files, directories, links, hard links each on its
 * own) and bytes of the paths and link targets its manifest would carry. A hard link costs no
 * inode and a path may be 4 KB, so the volume's inode count bounds neither: 30,000 links at
 * PATH_MAX depth made a 222 MB manifest and a 1.3 GB process (the pod's limit is 1 GiB).
 */
export interface ScanLimits {
  maxEntries: number;
  maxPathBytes: number;
}

/** The workspace holds more than a save keeps: the save is refused, the files stay where they are. */
function overLimit(limit: 'entries' | 'path_bytes', max: number): SandboxError {
  const what = limit === 'entries' ? `${max} files, directories and links` : `${max} bytes of paths and link targets`;
  return new SandboxError('quota_exceeded', `the session workspace holds more than a save keeps (${what}); its files stay unsaved until some are deleted`, false, {
    limit: `workspace_${limit}`,
    max,
  });
}

/** A file of the scan whose content is to be read again for upload (its hash is not saved yet). */
export interface ScannedFile {
  abs: string;
  ino: bigint;
}

// The listing's lstat, readdir and readlink calls are synchronous. On the local volume (or tmpfs)
// a workspace lives on, each takes microseconds, where its async form is a thread-pool round trip
// and a wake-up: a session of a few files paid ~0.9 ms on every run's answer path for its save's
// "did anything change" listing (issue 20). A large workspace gives the event loop back every
// SCAN_SLICE_MS, so other calls are never held longer than that; directories are read in pieces.
const SCAN_SLICE_MS = 2;
const DIR_PIECE = 256;

/** Yields to the event loop once SCAN_SLICE_MS of synchronous work has passed since the last yield. */
class ScanSlices {
  private since = performance.now();

  async pause(): Promise<void> {
    if (performance.now() - this.since < SCAN_SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/** The longest path Linux's file calls take (PATH_MAX, 4096 with its NUL). */
const MAX_PATH_BYTES = 4095;

/**
 * A directory entry's name as the workspace keeps it, or undefined for one it cannot: a program
 * in a run can create names that are not UTF-8 (unzip of an older archive does) and trees deeper
 * than PATH_MAX, which the manifest (JSON text), the files API (UTF-8 paths) and every later file
 * call cannot carry. Such an entry is left out, like a FIFO: not listed, not saved (it stays on the
 * volume while the session lives there). It used to fail every listing (500) and every save (503)
 * of the session.
 */
export function keptName(name: Buffer, parentAbs: string): string | undefined {
  if (!isUtf8(name) || Buffer.byteLength(parentAbs) + 1 + name.length > MAX_PATH_BYTES) return undefined;
  return name.toString('utf8');
}

/** The scan's count of names against its limits, checked as each is read. */
class ScanBudget {
  private names = 0;
  private pathBytes = 0;

  constructor(private readonly limits: ScanLimits) {}

  name(): void {
    if (++this.names > this.limits.maxEntries) throw overLimit('entries', this.limits.maxEntries);
  }

  path(text: string): void {
    this.pathBytes += Buffer.byteLength(text);
    if (this.pathBytes > this.limits.maxPathBytes) throw overLimit('path_bytes', this.limits.maxPathBytes);
  }
}

/**
 * The names in a directory the workspace keeps (unsorted; keptName), read a piece at a time between
 * pauses. Every name read counts against the scan's budget as it is read, so a directory of a
 * million hard links is refused after the first names past it, never held whole.
 */
async function namesIn(abs: string, slices: ScanSlices, budget: ScanBudget): Promise<string[]> {
  // Names as bytes (Node's types allow only text encodings here, its runtime takes 'buffer' too).
  const dir = opendirSync(abs, { encoding: 'buffer' as BufferEncoding });
  try {
    const names: string[] = [];
    let read = 0;
    for (let d = dir.readSync(); d !== null; d = dir.readSync()) {
      budget.name();
      const name = keptName(d.name as unknown as Buffer, abs);
      if (name !== undefined) names.push(name);
      if (++read % DIR_PIECE === 0) await slices.pause();
    }
    return names;
  } finally {
    dir.closeSync();
  }
}

/** Whether the directory has no entry (one read, however large it is). */
export function isEmptyDir(abs: string): boolean {
  const dir = opendirSync(abs);
  try {
    return dir.readSync() === null;
  } finally {
    dir.closeSync();
  }
}

/**
 * Lists the workspace under `root` (never following a link), hashing the files whose fingerprint
 * changed since `known`. Returns the manifest with its digest, the new fingerprints, and where each
 * content is. Throws quota_exceeded as soon as the workspace holds more than `limits`.
 */
export async function scanWorkspace(
  root: string,
  known: Fingerprints,
  limits: ScanLimits,
): Promise<{ manifest: Manifest; digest: string; fingerprints: Fingerprints; files: Map<string, ScannedFile> }> {
  const entries: ManifestEntry[] = [];
  const digest = new ManifestDigest();
  const budget = new ScanBudget(limits);
  const fingerprints: Fingerprints = new Map();
  const files = new Map<string, ScannedFile>();
  const firstNameOf = new Map<bigint, string>();
  const slices = new ScanSlices();
  const record = (e: ManifestEntry) => {
    entries.push(e);
    digest.add(e);
  };
  const add = (e: ManifestEntry) => {
    budget.path(e.p);
    if (e.t === 'l' || e.t === 'h') budget.path(e.to);
    record(e);
  };
  // Before any stat: a change after it is always later than this.
  const takenAtMs = Date.now();
  const visit = async (rel: string, abs: string): Promise<void> => {
    await slices.pause();
    const st = lstatSync(abs, { bigint: true });
    // Keys in the schema's order: a manifest read back digests the same as a listing (digestOf).
    const mt = Number(st.mtimeMs);
    const owner = { u: Number(st.uid), g: Number(st.gid) };
    if (st.isDirectory()) {
      add({ t: 'd', p: rel, m: Number(st.mode & 0o7777n), mt, ...owner });
      const names = (await namesIn(abs, slices, budget)).sort();
      for (const name of names) {
        // Uploads in progress are not the session's files until their last piece puts them in place.
        if (rel === '.' && name === UPLOAD_STAGING_DIR) continue;
        await visit(rel === '.' ? name : `${rel}/${name}`, join(abs, name));
      }
    } else if (st.isSymbolicLink()) {
      add({ t: 'l', p: rel, to: readlinkSync(abs), mt, ...owner });
    } else if (st.isFile()) {
      const first = st.nlink > 1n ? firstNameOf.get(st.ino) : undefined;
      if (first !== undefined) {
        add({ t: 'h', p: rel, to: first });
        return;
      }
      // Counted before its content is read: a file past the limits is not hashed.
      budget.path(rel);
      firstNameOf.set(st.ino, rel);
      const fp = fingerprintOf(st, takenAtMs);
      const seen = fp === undefined ? undefined : known.get(fp);
      const h = seen ?? (await hashFile(abs, st.ino));
      if (fp !== undefined) fingerprints.set(fp, h);
      if (!files.has(h)) files.set(h, { abs, ino: st.ino });
      record({ t: 'f', p: rel, m: Number(st.mode & 0o7777n), mt, s: Number(st.size), h, ...owner });
    }
    // FIFOs, sockets, devices: not kept (see above).
  };
  await visit('.', root);
  return { manifest: { v: 1, entries }, digest: digest.digest(), fingerprints, files };
}

/**
 * Opens a regular file of the workspace for reading without following a link or blocking on a
 * FIFO planted in its place, and checks it is still the file the scan saw.
 */
export async function openScanned(abs: string, ino: bigint): Promise<FileHandle> {
  const fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const st = await fh.stat({ bigint: true });
  if (!st.isFile() || st.ino !== ino) {
    await fh.close();
    throw new Error(`${abs} was replaced while the workspace was saved`);
  }
  return fh;
}

const READ_BYTES = 1 << 20;

async function hashFile(abs: string, ino: bigint): Promise<string> {
  const fh = await openScanned(abs, ino);
  try {
    const sha = createHash('sha256');
    for await (const chunk of readChunks(fh)) sha.update(chunk);
    return sha.digest('hex');
  } finally {
    await fh.close();
  }
}

/** The file's bytes from its start, in pieces of at most 1 MiB (each a fresh buffer). */
export async function* readChunks(fh: FileHandle): AsyncGenerator<Uint8Array> {
  let position = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(READ_BYTES);
    const { bytesRead } = await fh.read(buf, 0, READ_BYTES, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buf.subarray(0, bytesRead);
  }
}

// Runs of zeros this long (and aligned) are left as holes on restore: a sparse file of the
// quota's size (allowed: only its blocks count) must fit back into the volume it came from.
const HOLE_BYTES = 64 * 1024;
const ZEROS = Buffer.alloc(HOLE_BYTES);

/**
 * Fills the empty volume at `root` from `manifest`, reading each content from `contentOf`, `parallel`
 * at a time. Returns the fingerprints of what it wrote (for the next save's change detection).
 */
export async function writeWorkspace(
  root: string,
  manifest: Manifest,
  contentOf: (hash: string) => Promise<AsyncIterable<Uint8Array> | Iterable<Uint8Array>>,
  parallel = 4,
): Promise<Fingerprints> {
  const entries = ManifestSchema.parse(manifest).entries;
  const abs = (p: string) => (p === '.' ? root : join(root, p));
  // Directories first (parents before children: the list is in walk order), then contents.
  for (const e of entries) if (e.t === 'd' && e.p !== '.') await mkdir(abs(e.p), { mode: 0o700 });
  const regular = entries.filter((e) => e.t === 'f');
  let next = 0;
  const worker = async () => {
    while (next < regular.length) {
      const e = regular[next++]!;
      const fh = await open(abs(e.p), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        await writeSparse(fh, await contentOf(e.h), e.s);
      } finally {
        await fh.close();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, regular.length) }, worker));
  for (const e of entries) {
    if (e.t === 'l') await symlink(e.to, abs(e.p));
    else if (e.t === 'h') await link(abs(e.to), abs(e.p));
  }
  // Owners, modes and times last, children before their directory (writing into a directory
  // moves its mtime).
  for (const e of [...entries].reverse()) {
    if (e.t === 'h') continue;
    const path = abs(e.p);
    await lchown(path, e.u, e.g);
    if (e.t !== 'l') await chmod(path, e.m);
    // Half a millisecond in: seconds as a float do not land on the exact millisecond, and the next
    // listing (which floors to milliseconds) must read the same mtime back.
    const t = (e.mt + 0.5) / 1000;
    await lutimes(path, t, t);
  }
  // Fingerprints taken a tick after the last change (nothing else changes the fresh volume
  // meanwhile), so that the next save reads none of these files again.
  if (regular.length > 0) await new Promise((r) => setTimeout(r, RACY_MS + 10));
  const fingerprints: Fingerprints = new Map();
  const takenAtMs = Date.now();
  for (const e of regular) {
    const fp = fingerprintOf(await lstat(abs(e.p), { bigint: true }), takenAtMs);
    if (fp !== undefined) fingerprints.set(fp, e.h);
  }
  return fingerprints;
}

async function writeSparse(fh: FileHandle, content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, size: number): Promise<void> {
  let position = 0;
  let pending: Buffer = Buffer.alloc(0);
  const flush = async (buf: Buffer) => {
    for (let at = 0; at < buf.length; at += HOLE_BYTES) {
      const piece = buf.subarray(at, Math.min(at + HOLE_BYTES, buf.length));
      if (piece.length !== HOLE_BYTES || !piece.equals(ZEROS)) await fh.write(piece, 0, piece.length, position);
      position += piece.length;
    }
  };
  for await (const chunk of content) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const whole = pending.length - (pending.length % HOLE_BYTES);
    if (whole > 0) {
      await flush(pending.subarray(0, whole));
      pending = pending.subarray(whole);
    }
  }
  if (pending.length) await flush(pending);
  if (position !== size) throw new Error(`saved content of ${size} bytes came back with ${position}`);
  // A trailing hole: the size is set, the blocks are not written.
  await fh.truncate(size);
}
