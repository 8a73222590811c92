import { createHash } from 'node:crypto';
import { chmod, link, lstat, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, truncate, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentsOf, ManifestSchema, sameManifest, savedBytesOf, scanWorkspace, writeWorkspace, type Manifest } from './workspace-manifest.js';

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

    const { manifest } = await scanWorkspace(from, new Map());
    expect(ManifestSchema.parse(manifest)).toEqual(manifest);
    // Read back from the store (JSON, then the schema), it compares equal to the listing.
    expect(sameManifest(ManifestSchema.parse(JSON.parse(JSON.stringify(manifest))), manifest)).toBe(true);
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
    expect((await scanWorkspace(to, new Map())).manifest).toEqual(manifest);
  });

  it('hashes only files whose fingerprint changed, and files changed just before a listing again', async () => {
    await writeFile(join(from, 'x.txt'), 'one');
    // Changed within the clock tick of the listing: another change in that tick would keep its
    // ctime, so no fingerprint is kept for it.
    expect((await scanWorkspace(from, new Map())).fingerprints.has('x.txt')).toBe(false);
    await new Promise((r) => setTimeout(r, 250));
    const first = await scanWorkspace(from, new Map());
    expect(first.fingerprints.has('x.txt')).toBe(true);
    // A wrong hash kept for an unchanged fingerprint is trusted (so: not read again) ...
    const forged = new Map([...first.fingerprints].map(([p, v]) => [p, { ...v, h: sha('forged') }]));
    expect((await scanWorkspace(from, forged)).manifest.entries.find((e) => e.p === 'x.txt')).toMatchObject({ h: sha('forged') });
    // ... and a change of the file (new ctime) makes it hashed again.
    await writeFile(join(from, 'x.txt'), 'two');
    expect((await scanWorkspace(from, forged)).manifest.entries.find((e) => e.p === 'x.txt')).toMatchObject({ h: sha('two') });
  });

  it('lists a large workspace in order while giving the event loop its turns (its listing is synchronous, in slices)', async () => {
    // Directories only: nothing to hash, so any turn the loop gets comes from the scan's own pauses.
    const names = Array.from({ length: 3000 }, (_, i) => `d${i}`);
    for (const name of names) await mkdir(join(from, name));
    let turns = 0;
    const ticking = setInterval(() => (turns += 1), 0);
    try {
      const { manifest } = await scanWorkspace(from, new Map());
      expect(manifest.entries.map((e) => e.p)).toEqual(['.', ...names.sort()]);
    } finally {
      clearInterval(ticking);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it('refuses a manifest naming a path outside the workspace', async () => {
    for (const p of ['../escape', '/etc/passwd', 'a/../../b', 'a//b', '']) {
      const forged = { v: 1, entries: [{ t: 'f', p, m: 0o644, mt: 0, u: 0, g: 0, s: 0, h: sha('') }] };
      await expect(writeWorkspace(to, forged as Manifest, async () => [Buffer.alloc(0)])).rejects.toThrow();
    }
  });
});
