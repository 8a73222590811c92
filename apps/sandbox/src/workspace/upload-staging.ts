import { lstat, mkdir, readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/*
 * Where an upload in pieces gathers until its last piece (sandbox.files.write.v1's `upload`): a
 * directory at the workspace's root, on the same volume as the files (so its bytes count against
 * the session's quota, and its last piece is put in place by one rename). It belongs to the
 * sandbox's own user, mode 0700: a run (uid 65534) sees that it exists but can neither read what is
 * staged nor plant anything in it. It exists only while something is staged (removed once empty),
 * so a run that lists or archives the workspace between uploads never meets it. Never listed,
 * never saved (a restore never brings it back), and no path of the file API may name it. A run can
 * still replace the directory itself (the workspace's root is the run's): one not made by the
 * sandbox is never used (uploads are refused, typed, until it is deleted) and never read or swept.
 */
export const UPLOAD_STAGING_DIR = '.drael-uploads';

/** The staging directory of the workspace at `root`. */
export function stagingDirOf(root: string): string {
  return join(root, UPLOAD_STAGING_DIR);
}

/** Whether `rel` (a parsed workspace path) is the staging directory or inside it. */
export function isStagingPath(rel: string): boolean {
  return rel === UPLOAD_STAGING_DIR || rel.startsWith(`${UPLOAD_STAGING_DIR}/`);
}

const ownUid = (): number => process.getuid?.() ?? 0;

/** The directory at `dir` is the sandbox's own staging directory (not a link, not planted by a run). */
export async function isOwnStagingDir(dir: string): Promise<boolean> {
  const st = await lstat(dir);
  return st.isDirectory() && st.uid === ownUid() && (st.mode & 0o777) === 0o700;
}

/**
 * Makes (or finds) the staging directory; false when something else stands at its name (a run
 * planted a link, a file, or a directory of its own there), which the caller refuses.
 */
export async function ensureStagingDir(root: string): Promise<boolean> {
  const dir = stagingDirOf(root);
  await mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  return isOwnStagingDir(dir).catch(() => false);
}

/**
 * Deletes the staged uploads no piece has reached for `maxAgeMs` (their sender died or gave up):
 * each piece moves its file's mtime, and pieces of a live upload follow each other within one
 * request timeout. Returns how many went. A directory not the sandbox's own is left alone.
 */
export async function sweepAbandonedUploads(root: string, maxAgeMs: number): Promise<number> {
  const dir = stagingDirOf(root);
  if (!(await isOwnStagingDir(dir).catch(() => false))) return 0;
  let removed = 0;
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const st = await lstat(path).catch(() => undefined);
    if (!st || Date.now() - st.mtimeMs < maxAgeMs) continue;
    // unlink removes a link itself, never its target (none can be here: the directory is 0700).
    if (
      await unlink(path).then(
        () => true,
        () => false,
      )
    )
      removed += 1;
  }
  await dropStagingDirIfEmpty(root);
  return removed;
}

/** Removes the sandbox's staging directory if nothing is staged in it (rmdir refuses otherwise). */
export async function dropStagingDirIfEmpty(root: string): Promise<void> {
  const dir = stagingDirOf(root);
  if (await isOwnStagingDir(dir).catch(() => false)) await rmdir(dir).catch(() => undefined);
}
