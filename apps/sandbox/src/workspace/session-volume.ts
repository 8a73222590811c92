import { mkdir, open, readFile, rm, statfs, unlink } from 'node:fs/promises';
import { runHostCommand } from './host-command.js';

const SANDBOX_UID_GID = '65534:65534';

/**
 * A session's files live in their own small ext4 filesystem (a sparse image file, loop-mounted
 * while in use). The filesystem's size IS the quota, enforced by the kernel (ENOSPC) however the
 * program writes, and a hard link into it from outside is impossible. It is mounted with
 * `nosymfollow`, so no symlink planted inside is ever followed by anything on the host, and with
 * nosuid,nodev.
 */
export async function createVolume(image: string, bytes: number): Promise<void> {
  const fh = await open(image, 'wx', 0o600);
  try {
    await fh.truncate(bytes);
  } finally {
    await fh.close();
  }
  try {
    // -m 0: no blocks reserved for root; -N bounds the inode count (a file flood hits ENOSPC);
    // root_owner: the sandbox user owns the workspace root.
    const inodes = Math.max(1024, Math.floor(bytes / (16 * 1024)));
    await runHostCommand('mkfs.ext4', ['-q', '-F', '-m', '0', '-N', String(inodes), '-E', `root_owner=${SANDBOX_UID_GID}`, '-L', 'drael-ws', image]);
  } catch (err) {
    await unlink(image).catch(() => undefined);
    throw err;
  }
}

export async function mountVolume(image: string, mountPoint: string): Promise<void> {
  await mkdir(mountPoint, { recursive: true, mode: 0o700 });
  await runHostCommand('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,nosymfollow,noatime', image, mountPoint]);
  // mkfs leaves lost+found; it is root's and only clutters the listing.
  await rm(`${mountPoint}/lost+found`, { recursive: true, force: true }).catch(() => undefined);
}

export async function unmountVolume(mountPoint: string): Promise<void> {
  try {
    await runHostCommand('umount', [mountPoint]);
  } catch {
    // A process still holding it (should not happen: runs hold a reference): detach lazily so the
    // loop device is freed as soon as it lets go.
    await runHostCommand('umount', ['-l', mountPoint]).catch(() => undefined);
  }
}

/** Mount points under `root` still mounted (left by a crash), deepest first. */
export async function mountsUnder(root: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return info
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => !!p && p.startsWith(prefix))
    .map((p) => p.replace(/\\040/g, ' '))
    .sort((a, b) => b.length - a.length);
}

export interface VolumeUsage {
  usedBytes: number;
  freeBytes: number;
}

export async function volumeUsage(mountPoint: string): Promise<VolumeUsage> {
  const s = await statfs(mountPoint);
  return { usedBytes: (s.blocks - s.bfree) * s.bsize, freeBytes: s.bavail * s.bsize };
}
