import { createHash } from 'node:crypto';
import { chmod, link, lstat, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, truncate, utimes, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentsOf, digestOf, ManifestSchema, savedBytesOf, scanWorkspace, writeWorkspace, type Manifest, type ScanLimits } from './workspace-manifest.js';

let from: string;
let to: string;
beforeEach(async () => {
  from = await mkdtemp(join(tmpdir(), 'ws-from-'));
  to = await mkdtemp(join(tmpdir(), 'ws-to-'));
});
afterEach(async () => {
  await rm(from, { recursive: true, force: true });
  await rm(to, { recursive: true, force: true });
});

const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
// The defaults (SANDBOX_WORKSPACE_MAX_ENTRIES, SANDBOX_WORKSPACE_MAX_PATH_MB).
const LIMITS: ScanLimits = { maxEntries: 32_768, maxPathBytes: 8 << 20 };

/** Contents by hash, read from the scanned tree (what the Object Store would hold). */
async function contentsFrom(root: string, manifest: Manifest): Promise<Map<string, Buffer>> {
  const byHash = new Map<string, Buffer>();
  for (const e of manifest.entries) if (e.t === 'f') byHash.set(e.h, await readFile(join(root, e.p)));
  return byHash;
}

describe('workspace manifest', () => {
  it('round-trips files, directories, symlinks, hard links, modes and holes; a file deleted is absent', async () => {
    await mkdir(join(from, 'd/e'), { recursive: true });
    await writeFile(join(from, 'a.txt'), 'alpha');
    await writeFile(join(from, 'd/e/same.txt'), 'alpha');
    await writeFile(join(from, 'gone.txt'), 'bye');
    await chmod(join(from, 'a.txt'), 0o640);
    await link(join(from, 'a.txt'), join(from, 'hard.txt'));
    await symlink('../a.txt', join(from, 'd/link'));
    await writeFile(join(from, 'sparse.bin'), '');
    await truncate(join(from, 'sparse.bin'), 8 << 20);
    await appendFile(join(from, 'sparse.bin'), 'end');
    await rm(join(from, 'gone.txt'));

    const { manifest, digest } = await scanWorkspace(from, new Map(), LIMITS);
    expect(ManifestSchema.parse(manifest)).toEqual(manifest);
    // Read back from the store (JSON, then the schema), it has the digest the scan computed as it listed.
    expect(digestOf(ManifestSchema.parse(JSON.parse(JSON.stringify(manifest))))).toBe(digest);
    expect(digestOf(manifest)).toBe(digest);
    expect(manifest.entries.map((e) => `${e.t} ${e.p}`)).toEqual(['d .', 'f a.txt', 'd d', 'd d/e', 'f d/e/same.txt', 'l d/link', 'h hard.txt', 'f sparse.bin']);
    // One content per distinct content: a.txt and d/e/same.txt share theirs.
    expect(contentsOf(manifest).has(sha('alpha'))).toBe(true);
    expect(contentsOf(manifest).size).toBe(2);
    // What its saved copy takes: each distinct content once (alpha, shared by three names; the sparse file at its size).
    expect(savedBytesOf(manifest)).toBe('alpha'.length + (8 << 20) + 'end'.length);

    const contents = await contentsFrom(from, manifest);
    await writeWorkspace(to, manifest, async (h) => [contents.get(h)!]);
    expect(await readFile(join(to, 'a.txt'), 'utf8')).toBe('alpha');
    expect(await readFile(join(to, 'd/e/same.txt'), 'utf8')).toBe('alpha');
    expect(((await stat(join(to, 'a.txt'))).mode & 0o777).toString(8)).toBe('640');
    expect((await stat(join(to, 'hard.txt'))).ino).toBe((await stat(join(to, 'a.txt'))).ino);
    expect(await readlink(join(to, 'd/link'))).toBe('../a.txt');
    await expect(lstat(join(to, 'gone.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    const sparse = await stat(join(to, 'sparse.bin'));
    expect(sparse.size).toBe((8 << 20) + 3);
    // Restored as a hole, not 8 MiB of written zeros.
    expect(sparse.blocks * 512).toBeLessThan(1 << 20);
    // The restored tree lists the same as the saved one (modes, owners, mtimes included).
    expect((await scanWorkspace(to, new Map(), LIMITS)).manifest).toEqual(manifest);
  });

  it('hashes only files whose fingerprint changed, and files changed just before a listing again', async () => {
    await writeFile(join(from, 'x.txt'), 'one');
    // Changed within the clock tick of the listing: another change in that tick would keep its
    // ctime, so no fingerprint is kept for it.
    expect((await scanWorkspace(from, new Map(), LIMITS)).fingerprints.size).toBe(0);
    await new Promise((r) => setTimeout(r, 250));
    const first = await scanWorkspace(from, new Map(), LIMITS);
    expect([...first.fingerprints.values()]).toEqual([sha('one')]);
    // A wrong hash kept for an unchanged fingerprint is trusted (so: not read again) ...
    const forged = new Map([...first.fingerprints.keys()].map((fp) => [fp, sha('forged')]));
    expect((await scanWorkspace(from, forged, LIMITS)).manifest.entries.find((e) => e.p === 'x.txt')).toMatchObject({ h: sha('forged') });
    // ... and a change of the file (new ctime) makes it hashed again.
    await writeFile(join(from, 'x.txt'), 'two');
    expect((await scanWorkspace(from, forged, LIMITS)).manifest.entries.find((e) => e.p === 'x.txt')).toMatchObject({ h: sha('two') });
  });

  it('lists a large workspace in order while giving the event loop its turns (its listing is synchronous, in slices)', async () => {
    // Directories only: nothing to hash, so any turn the loop gets comes from the scan's own pauses.
    const names = Array.from({ length: 3000 }, (_, i) => `d${i}`);
    for (const name of names) await mkdir(join(from, name));
    let turns = 0;
    const ticking = setInterval(() => (turns += 1), 0);
    try {
      const { manifest } = await scanWorkspace(from, new Map(), LIMITS);
      expect(manifest.entries.map((e) => e.p)).toEqual(['.', ...names.sort()]);
    } finally {
      clearInterval(ticking);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it('tells a changed listing by its digest: a touched mtime or a new hard link changes it, a second listing of the same tree does not', async () => {
    await writeFile(join(from, 'x.txt'), 'x');
    const first = await scanWorkspace(from, new Map(), LIMITS);
    expect((await scanWorkspace(from, first.fingerprints, LIMITS)).digest).toBe(first.digest);
    await link(join(from, 'x.txt'), join(from, 'y.txt'));
    const linked = await scanWorkspace(from, new Map(), LIMITS);
    expect(linked.digest).not.toBe(first.digest);
    await utimes(join(from, 'x.txt'), 1, 1);
    expect((await scanWorkspace(from, new Map(), LIMITS)).digest).not.toBe(linked.digest);
  });

  it('refuses a workspace with more names than the limit, each hard link counted, and takes one at the limit', async () => {
    await writeFile(join(from, 'f'), 'x');
    for (let i = 0; i < 9; i++) await link(join(from, 'f'), join(from, `l${i}`));
    // The root and ten names: at a limit of ten names, listed.
    const { manifest } = await scanWorkspace(from, new Map(), { ...LIMITS, maxEntries: 10 });
    expect(manifest.entries.filter((e) => e.t === 'h')).toHaveLength(9);
    await link(join(from, 'f'), join(from, 'l9'));
    await expect(scanWorkspace(from, new Map(), { ...LIMITS, maxEntries: 10 })).rejects.toMatchObject({
      code: 'quota_exceeded',
      retryable: false,
      details: { limit: 'workspace_entries', max: 10 },
    });
  });

  it('refuses a workspace whose paths and link targets take more bytes than the limit: hard links deep in the tree', async () => {
    // 30 directories of 100-byte names: a 3 KB path, each hard link there 6 KB of manifest (its path and its target's).
    let leaf = from;
    for (let i = 0; i < 30; i++) await mkdir((leaf = join(leaf, 'd'.repeat(100))));
    await writeFile(join(leaf, 'f'), 'x');
    for (let i = 0; i < 200; i++) await link(join(leaf, 'f'), join(leaf, `l${i}`));
    // 231 entries, far under the count, but ~1.3 MB of paths.
    await expect(scanWorkspace(from, new Map(), { ...LIMITS, maxPathBytes: 1 << 20 })).rejects.toMatchObject({
      code: 'quota_exceeded',
      details: { limit: 'workspace_path_bytes', max: 1 << 20 },
    });
    const listed = await scanWorkspace(from, new Map(), { ...LIMITS, maxPathBytes: 2 << 20 });
    expect(listed.manifest.entries).toHaveLength(1 + 30 + 1 + 200);
  });

  it('refuses a manifest naming a path outside the workspace', async () => {
    for (const p of ['../escape', '/etc/passwd', 'a/../../b', 'a//b', '']) {
      const forged = { v: 1, entries: [{ t: 'f', p, m: 0o644, mt: 0, u: 0, g: 0, s: 0, h: sha('') }] };
      await expect(writeWorkspace(to, forged as Manifest, async () => [Buffer.alloc(0)])).rejects.toThrow();
    }
  });
});
