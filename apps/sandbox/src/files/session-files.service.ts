import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { MAX_FILE_TRANSFER_BYTES } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';
import { QUOTA_HEADROOM_BYTES, WorkspaceService, type SessionWorkspace, type WorkspaceRef } from '../workspace/workspace.service.js';
import { keptName } from '../workspace/workspace-manifest.js';
import { dropStagingDirIfEmpty, ensureStagingDir, isOwnStagingDir, stagingDirOf, sweepAbandonedUploads, UPLOAD_STAGING_DIR } from '../workspace/upload-staging.js';
import { parseNewFilePath, parseWorkspacePath } from './safe-path.js';
import { SandboxError } from '../sandbox-error.js';
import { TenantStoreBudget } from '../placement/tenant-store-budget.js';

const SANDBOX_UID = 65534;
// Bounds a listing so a file flood cannot turn one list call into a huge reply.
const MAX_LISTED = 2_000;
// Never follow a final symlink, never block on a planted FIFO or device.
const OPEN_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const OPEN_APPEND = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
// A staging file is the sandbox's own (0600) until its last piece; a later piece never creates one:
// its earlier pieces being gone means the upload is lost, not that it starts empty.
const OPEN_STAGE_FIRST = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const OPEN_STAGE_MORE = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** How a write reaches its file (sandbox.files.write.v1's `append`, `more`, `upload`). */
export interface WriteOptions {
  append?: boolean | undefined;
  more?: boolean | undefined;
  upload?: string | undefined;
}

export interface FileEntry {
  path: string;
  size: number;
  modified_at: string;
}

/**
 * The files of a session, for the gateway. The workspace is written by untrusted programs, so
 * every access is link-safe: the volume is mounted nosymfollow (an intermediate symlink fails
 * with ELOOP), the last component is opened O_NOFOLLOW, and only regular files are read.
 */
@Injectable()
export class SessionFilesService {
  constructor(
    private readonly workspaces: WorkspaceService,
    private readonly budget: TenantStoreBudget,
  ) {}

  async list(ref: WorkspaceRef): Promise<{ files: FileEntry[]; truncated: boolean; used_bytes: number; quota_bytes: number; free_bytes: number }> {
    return this.withWorkspace(ref, false, async (ws) => {
      // No volume yet: the first write creates one, whose filesystem keeps a little of the quota.
      if (!ws) return { files: [], truncated: false, used_bytes: 0, quota_bytes: this.workspaces.quotaBytes, free_bytes: this.workspaces.quotaBytes - QUOTA_HEADROOM_BYTES };
      // The room reported is the room an upload has: a cut-off upload's bytes are not kept in it.
      await sweepAbandonedUploads(ws.path, this.workspaces.uploadAbandonedMs).catch(() => undefined);
      const files: FileEntry[] = [];
      // A file found past the bound: the listing says it names only some of the files.
      let truncated = false;
      const walk = async (rel: string): Promise<void> => {
        const abs = join(ws.path, rel);
        const entries = await readdir(abs, { withFileTypes: true, encoding: 'buffer' });
        for (const d of entries) {
          if (truncated) return;
          // Uploads in progress (or cut off) are no files of the session.
          if (rel === '' && d.name.toString() === UPLOAD_STAGING_DIR) continue;
          // What the workspace cannot keep (a name that is not UTF-8, a path past PATH_MAX) is not listed either.
          const name = keptName(d.name, abs);
          if (name === undefined) continue;
          const childRel = rel ? `${rel}/${name}` : name;
          // Dirent types come from lstat semantics: a symlink is a symlink, never its target.
          if (d.isDirectory()) await walk(childRel);
          else if (d.isFile()) {
            const st = await lstat(join(ws.path, childRel));
            if (!st.isFile()) continue;
            if (files.length === MAX_LISTED) {
              truncated = true;
              return;
            }
            files.push({ path: childRel, size: st.size, modified_at: st.mtime.toISOString() });
          }
        }
      };
      await walk('');
      const usage = await ws.usage();
      // The same room write() checks each piece against.
      return { files, truncated, used_bytes: usage.usedBytes, quota_bytes: this.workspaces.quotaBytes, free_bytes: Math.max(0, usage.freeBytes - QUOTA_HEADROOM_BYTES) };
    });
  }

  async read(ref: WorkspaceRef, path: string, maxBytes?: number, offset = 0) {
    const rel = parseWorkspacePath(path);
    const limit = Math.min(maxBytes ?? MAX_FILE_TRANSFER_BYTES, MAX_FILE_TRANSFER_BYTES);
    return this.withWorkspace(ref, false, async (ws) => {
      if (!ws) throw notFound(rel);
      const fh = await openSafely(join(ws.path, rel), OPEN_READ, rel);
      try {
        const st = await fh.stat();
        if (!st.isFile()) throw refused(rel, 'not a regular file');
        const buf = Buffer.alloc(Math.min(limit, Math.max(0, st.size - offset)));
        const { bytesRead } = buf.length > 0 ? await fh.read(buf, 0, buf.length, offset) : { bytesRead: 0 };
        return { path: rel, content_base64: buf.subarray(0, bytesRead).toString('base64'), size: st.size, truncated: st.size > offset + bytesRead };
      } finally {
        await fh.close();
      }
    });
  }

  /**
   * Writes a file, or one piece of an upload (WriteOptions). Every write but a legacy append
   * (`append` without `upload`) goes through a staging file (workspace/upload-staging.ts) and
   * reaches `path` by one rename with its last piece: until then `path` keeps its old content or
   * stays absent, whatever happens to the sender or to a piece (a full volume, a refusal).
   */
  async write(ref: WorkspaceRef, path: string, contentBase64: string, options: WriteOptions = {}) {
    const rel = parseNewFilePath(path);
    const content = decodeWritable(contentBase64);
    return this.withWorkspace(ref, true, async (ws) => {
      if (!ws) throw new Error('workspace missing after create');
      // The tenant's budget of saved bytes, before the bytes land: refused by the save after the
      // write, they would stay here though the caller was told no.
      await this.budget.assertRoom(ref.tenant, content.length);
      if (options.append && options.upload === undefined) return this.appendInPlace(ws, rel, content);
      // A new upload first sweeps those cut off before it: their bytes would count against its room.
      if (!options.append) await sweepAbandonedUploads(ws.path, this.workspaces.uploadAbandonedMs).catch(() => undefined);
      const usage = await ws.usage();
      if (content.length > usage.freeBytes - QUOTA_HEADROOM_BYTES) throw quotaExceeded(this.workspaces.quotaBytes);
      // A write in one piece is an upload of its own, under a name nobody else uses; so is a
      // legacy first piece (`more` without `upload`): its later pieces append to `path` itself.
      const upload = options.upload ?? randomUUID();
      const more = options.upload !== undefined && options.more === true;
      const staged = join(stagingDirOf(ws.path), upload);
      let stillStaged = false;
      try {
        const fh = await openStaged(ws.path, upload, options.append === true);
        const size = await writeStaged(fh, { staged, rel, root: ws.path, content, append: options.append === true, more }, this.workspaces.quotaBytes);
        if (more) {
          stillStaged = true;
          return { path: rel, size };
        }
        try {
          await guard(rel, () => mkdirAsSandbox(ws.path, dirname(rel)));
          // rename never follows a link at `path` (it replaces the link itself), and the volume is
          // nosymfollow: one in a directory above fails (ELOOP), refused like any other link.
          await guard(rel, () => rename(staged, join(ws.path, rel)));
        } catch (err) {
          await unlink(staged).catch(() => undefined);
          throw err;
        }
        return { path: rel, size };
      } finally {
        // A piece that failed mid-upload leaves its file for the sender to drop (rmdir refuses then).
        if (!stillStaged) await dropStagingDirIfEmpty(ws.path);
      }
    });
  }

  /** Drops what an upload staged (its sender gave up on it); the file at its path is untouched. */
  async dropUpload(ref: WorkspaceRef, path: string, upload: string) {
    const rel = parseWorkspacePath(path);
    return this.withWorkspace(ref, false, async (ws) => {
      if (!ws || !(await isOwnStagingDir(stagingDirOf(ws.path)).catch(() => false))) return { path: rel, deleted: false };
      const deleted = await unlink(join(stagingDirOf(ws.path), upload)).then(
        () => true,
        () => false,
      );
      await dropStagingDirIfEmpty(ws.path);
      return { path: rel, deleted };
    });
  }

  /** A piece appended to `path` itself (a sender from before uploads were staged). */
  private async appendInPlace(ws: SessionWorkspace, rel: string, content: Buffer) {
    const usage = await ws.usage();
    if (content.length > usage.freeBytes - QUOTA_HEADROOM_BYTES) throw quotaExceeded(this.workspaces.quotaBytes);
    const full = join(ws.path, rel);
    await guard(rel, () => mkdirAsSandbox(ws.path, dirname(rel)));
    const fh = await openSafely(full, OPEN_APPEND, rel, 0o644);
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw refused(rel, 'not a regular file');
      await fh.chown(SANDBOX_UID, SANDBOX_UID);
      try {
        // O_APPEND writes at the end; a failed piece leaves the file as it was.
        await fh.write(content, 0, content.length, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOSPC' || (err as NodeJS.ErrnoException).code === 'EDQUOT') {
          await fh.truncate(st.size).catch(() => undefined);
          throw quotaExceeded(this.workspaces.quotaBytes);
        }
        throw err;
      }
      return { path: rel, size: st.size + content.length };
    } finally {
      await fh.close();
    }
  }

  async delete(ref: WorkspaceRef, path: string) {
    const rel = parseWorkspacePath(path);
    return this.withWorkspace(ref, false, async (ws) => {
      if (!ws) return { path: rel, deleted: false };
      const full = join(ws.path, rel);
      const st = await guard(rel, () => lstat(full)).catch((err: unknown) => {
        if (err instanceof RpcError && err.code === 'file_not_found') return undefined;
        throw err;
      });
      if (!st) return { path: rel, deleted: false };
      if (st.isDirectory()) throw refused(rel, 'is a directory');
      // unlink removes a symlink itself, never its target.
      await guard(rel, () => unlink(full));
      return { path: rel, deleted: true };
    });
  }

  private async withWorkspace<T>(ref: WorkspaceRef, create: boolean, fn: (ws: SessionWorkspace | undefined) => Promise<T>): Promise<T> {
    const ws = await this.workspaces.acquire(ref, { create });
    try {
      return await fn(ws);
    } finally {
      await ws?.release();
    }
  }
}

/** The content of a write, refused (typed) unless it is base64 of at most one transfer's size. */
export function decodeWritable(contentBase64: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(contentBase64) || contentBase64.length % 4 !== 0) {
    throw new SandboxError('bad_request', 'content_base64 is not base64', false, { param: 'content_base64' });
  }
  const content = Buffer.from(contentBase64, 'base64');
  if (content.length > MAX_FILE_TRANSFER_BYTES) {
    throw new SandboxError('file_too_large', `a file written through this subject is at most ${MAX_FILE_TRANSFER_BYTES} bytes`, false);
  }
  return content;
}

async function mkdirAsSandbox(root: string, relDir: string): Promise<void> {
  if (relDir === '.' || relDir === '') return;
  let cur = root;
  for (const part of relDir.split('/')) {
    cur = join(cur, part);
    try {
      await mkdir(cur, { mode: 0o755 });
      const fh = await open(cur, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      await fh.chown(SANDBOX_UID, SANDBOX_UID).finally(() => fh.close());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const st = await lstat(cur);
      if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    }
  }
}

async function openSafely(full: string, flags: number, rel: string, mode?: number): Promise<FileHandle> {
  return guard(rel, () => open(full, flags, mode));
}

/**
 * Opens an upload's staging file in the workspace at `root`: made by its first piece, only ever
 * appended to by the others. The staging directory must be the sandbox's own (a run may have put
 * something else at its name: refused, typed). A first piece tries again if another upload's end
 * removed the (then empty) directory between its check and its open.
 */
async function openStaged(root: string, upload: string, append: boolean): Promise<FileHandle> {
  const name = `${UPLOAD_STAGING_DIR}/${upload}`;
  const staged = join(stagingDirOf(root), upload);
  for (let attempt = 1; ; attempt++) {
    if (!(await ensureStagingDir(root))) {
      throw refused(UPLOAD_STAGING_DIR, 'is where uploads are staged, and a run put something else there: delete it (with a run) to upload again');
    }
    try {
      return await guard(name, () => open(staged, append ? OPEN_STAGE_MORE : OPEN_STAGE_FIRST, 0o600));
    } catch (err) {
      const missing = err instanceof RpcError && err.code === 'file_not_found';
      if (missing && !append && attempt < 3) continue;
      if (missing && append) {
        throw new SandboxError(
          'unavailable',
          `upload ${upload}: its earlier pieces are gone (the session moved to another replica, or the upload was abandoned); send the whole file again`,
          false,
          { param: 'upload' },
        );
      }
      throw err;
    }
  }
}

/**
 * Writes one piece into its staging file and closes it; the last piece also takes the mode of the
 * file it replaces and the sandbox user as owner. Returns the staged size. On a failure the staged
 * file goes if nothing else is to come to it (a last piece), or if the volume is full (an upload
 * that does not fit is dropped whole: nothing of it remains to count).
 */
async function writeStaged(
  fh: FileHandle,
  piece: { staged: string; rel: string; root: string; content: Buffer; append: boolean; more: boolean },
  quotaBytes: number,
): Promise<number> {
  const { staged, rel, root, content, append, more } = piece;
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw refused(rel, 'not a regular file');
    try {
      await fh.write(content, 0, content.length, append ? null : 0);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') {
        await unlink(staged).catch(() => undefined);
        throw quotaExceeded(quotaBytes);
      }
      throw err;
    }
    if (!more) {
      // What stands at the path now: a link or a directory is refused as a direct write refuses
      // it (rename would replace a link, never follow it, if one is planted after this check).
      // The file it replaces keeps its permissions (an executable stays executable).
      const replaced = await lstat(join(root, rel)).catch(() => undefined);
      if (replaced?.isSymbolicLink()) throw refused(rel, 'a symbolic link is never followed');
      if (replaced && !replaced.isFile()) throw refused(rel, 'not a regular file');
      await fh.chmod(replaced ? replaced.mode & 0o777 : 0o644);
      await fh.chown(SANDBOX_UID, SANDBOX_UID);
    }
    return (append ? st.size : 0) + content.length;
  } catch (err) {
    if (!more) await unlink(staged).catch(() => undefined);
    throw err;
  } finally {
    await fh.close();
  }
}

/** Maps filesystem refusals to typed errors; a link is always `invalid_path` (refused). */
async function guard<T>(rel: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RpcError) throw err;
    switch ((err as NodeJS.ErrnoException).code) {
      case 'ELOOP':
        throw refused(rel, 'a symbolic link is never followed');
      case 'ENOENT':
        throw notFound(rel);
      case 'ENOTDIR':
      case 'EISDIR':
      case 'ENXIO':
      case 'EEXIST':
        throw refused(rel, 'not a regular file');
      case 'ENOSPC':
      case 'EDQUOT':
        throw new SandboxError('quota_exceeded', 'the session workspace is full', false);
      case 'ENAMETOOLONG':
        throw refused(rel, 'name too long');
      default:
        throw err;
    }
  }
}

const refused = (rel: string, why: string) => new SandboxError('invalid_path', `${rel}: ${why}`, false, { param: 'path' });
const notFound = (rel: string) => new SandboxError('file_not_found', `${rel}: no such file in this session`, false, { param: 'path' });
const quotaExceeded = (quota: number) => new SandboxError('quota_exceeded', `the session workspace quota (${quota} bytes) is used up`, false, { quota_bytes: quota });
