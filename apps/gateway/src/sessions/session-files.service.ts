import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { MAX_FILE_TRANSFER_BYTES, sandboxCatalog, type ListPage, type ListPageQuery } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { ApiError } from '../errors/api-error.js';
import type { Caller } from '../auth/identity.js';
import { assertSessionAccess, type SessionAccess } from '../tools/tool-levels.js';
import type { Workspace, WorkspaceFields } from './workspace.js';

/** Whose files: the account (tenant) and the session id, as the sandbox's file subjects name them. */
type FileOwner = Pick<WorkspaceFields, 'tenant' | 'session'>;

export interface FileListing {
  object: 'list';
  data: Array<{ path: string; size: number; modified_at: string }>;
  /** More files are in the session than `data` names (a listing names at most 2,000). */
  has_more: boolean;
  used_bytes: number;
  quota_bytes: number;
  /** What an upload may still add now (less than quota − used: the filesystem keeps some). */
  free_bytes?: number;
}

/** One session of the account, as GET /v1/sessions lists it (times in Unix seconds, as OpenAI's objects). */
export interface SessionObject {
  id: string;
  object: 'session';
  bytes: number;
  created_at: number;
  last_used_at: number;
}

/** GET /v1/sessions: one page of the account's sessions, and what it holds and may hold. */
export interface SessionList extends ListPage<SessionObject> {
  /** Sessions the account holds, and the most it may (SANDBOX_MAX_SESSIONS_PER_TENANT). */
  total: number;
  max_sessions: number;
  /** Bytes its saved workspaces take, and the most they may (SANDBOX_TENANT_STORE_MAX_MB; null: no budget). */
  stored_bytes?: number;
  max_stored_bytes?: number | null;
}

/** The account whose sessions a caller reaches, once its key's level allows this access (assertSessionAccess). */
function sessionTenantOf(caller: Caller, access: SessionAccess = 'read'): string {
  assertSessionAccess(caller.tool_level, access);
  return caller.account_id;
}

/**
 * A session's files over the sandbox's file subjects. The tenant is always the caller's account,
 * so a session id names a different workspace for every account (spec 01: namespaced by tenant).
 */
@Injectable()
export class SessionFilesService {
  constructor(private readonly rpc: NatsRpcClient) {}

  /**
   * The account's sessions, one page, newest first unless asked otherwise, with what the account
   * holds and may hold: its sessions, and the bytes its saved workspaces take (sessions and
   * requests' own workspaces), which a run's or an upload's save may not grow past.
   */
  async listSessions(caller: Caller, query: ListPageQuery): Promise<SessionList> {
    const r = await this.rpc.request(sandboxCatalog.sessionsList, { tenant: sessionTenantOf(caller), ...query });
    const data = r.sessions.map((s) => ({ id: s.id, object: 'session' as const, bytes: s.bytes, created_at: s.created_at, last_used_at: s.last_used_at }));
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: r.has_more,
      total: r.total,
      max_sessions: r.max_sessions,
      // An older sandbox does not say.
      ...(r.stored_bytes !== undefined ? { stored_bytes: r.stored_bytes, max_stored_bytes: r.max_stored_bytes ?? null } : {}),
    };
  }

  async list(caller: Caller, session: string): Promise<FileListing> {
    const r = await this.rpc.request(sandboxCatalog.filesList, { tenant: sessionTenantOf(caller), session });
    return {
      object: 'list',
      data: r.files,
      has_more: r.truncated === true,
      used_bytes: r.used_bytes,
      quota_bytes: r.quota_bytes,
      ...(r.free_bytes !== undefined ? { free_bytes: r.free_bytes } : {}),
    };
  }

  /**
   * A whole file as a stream, read in pieces of one message each: the first piece before anything
   * is sent (a missing file is an HTTP error, the size is known), the rest as the client takes them.
   */
  async open(caller: Caller, session: string, path: string): Promise<{ size: number; body: Readable }> {
    const scope = { tenant: sessionTenantOf(caller), session, path, max_bytes: MAX_FILE_TRANSFER_BYTES };
    const first = await this.rpc.request(sandboxCatalog.filesRead, scope);
    const rpc = this.rpc;
    async function* pieces(): AsyncGenerator<Buffer> {
      let piece = first;
      let offset = 0;
      for (;;) {
        const bytes = Buffer.from(piece.content_base64, 'base64');
        if (bytes.length > 0) yield bytes;
        offset += bytes.length;
        // Never past the size announced in content-length, even if the file grew meanwhile.
        if (!piece.truncated || bytes.length === 0 || offset >= first.size) return;
        piece = await rpc.request(sandboxCatalog.filesRead, { ...scope, offset, max_bytes: Math.min(MAX_FILE_TRANSFER_BYTES, first.size - offset) });
      }
    }
    return { size: first.size, body: Readable.from(pieces()) };
  }

  /**
   * A client's upload (at most BODY_LIMIT_BYTES, the gateway's body limit), in pieces. One that
   * cannot fit in the session's free room is refused before anything is written; the file it
   * would replace is kept in every case until the whole upload has landed (writePieces).
   */
  async write(caller: Caller, session: string, path: string, content: Buffer): Promise<{ path: string; size: number }> {
    const scope = { tenant: sessionTenantOf(caller, 'write'), session };
    if (content.length > MAX_FILE_TRANSFER_BYTES) await this.assertRoom(scope, content.length);
    return this.writePieces(scope, path, content);
  }

  /** Writes a file into a request's workspace (its session's or its own), in pieces (writePieces). */
  async writeIn(workspace: Workspace, path: string, content: Buffer, options: { signal?: AbortSignal; requestId?: string } = {}): Promise<{ path: string; size: number }> {
    return this.writePieces(workspace.use(), path, content, options);
  }

  /**
   * Sends a file as one upload (sandbox.files.write.v1 `upload`) of pieces of one message each.
   * The sandbox stages them and puts the whole file at `path` with the last one, so an upload cut
   * off (a failed piece, this gateway dying) never leaves a truncated file there: the old one
   * stays. On a failed piece the staged pieces are dropped at once; if this process dies, the
   * sandbox drops them once no piece came for SANDBOX_UPLOAD_ABANDONED_S.
   */
  private async writePieces(scope: FileOwner, path: string, content: Buffer, options: { signal?: AbortSignal; requestId?: string } = {}): Promise<{ path: string; size: number }> {
    const upload = randomUUID();
    let written = { path, size: 0 };
    for (let at = 0; at === 0 || at < content.length; at += MAX_FILE_TRANSFER_BYTES) {
      const piece = content.subarray(at, at + MAX_FILE_TRANSFER_BYTES);
      // Every piece but the last says more follow: the session is saved once, with the whole file.
      const more = at + MAX_FILE_TRANSFER_BYTES < content.length;
      try {
        written = await this.rpc.request(
          sandboxCatalog.filesWrite,
          { ...scope, path, upload, content_base64: piece.toString('base64'), ...(at > 0 ? { append: true } : {}), ...(more ? { more: true } : {}) },
          options,
        );
      } catch (err) {
        // Not waited on the caller's signal: the client that went away leaves nothing staged behind.
        if (more || at > 0) await this.rpc.request(sandboxCatalog.filesDelete, { ...scope, path, upload }, { requestId: options.requestId }).catch(() => undefined);
        throw err;
      }
    }
    return written;
  }

  /**
   * Refuses an upload larger than the session's free room. The file it replaces still counts: it
   * stays in place, whole, until the new one has landed beside it (writePieces).
   */
  private async assertRoom(scope: FileOwner, size: number): Promise<void> {
    const listing = await this.rpc.request(sandboxCatalog.filesList, scope);
    const room = listing.free_bytes ?? listing.quota_bytes - listing.used_bytes;
    if (size > room) {
      throw new ApiError(
        'quota_exceeded',
        `The file (${size} bytes) does not fit in the session: it has room for ${Math.max(0, room)} bytes (quota ${listing.quota_bytes}). Nothing was written; delete files to make room (a file it replaces counts until the new one is in place).`,
        'body',
      );
    }
  }

  /**
   * Deletes a request's own workspace once the request has ended (success, error or disconnect).
   * Never throws: a workspace the sandbox could not delete is its own sweep's to reap.
   */
  async discard(workspace: Workspace, requestId: string): Promise<void> {
    if (!workspace.needsDiscard) return;
    await this.rpc.request(sandboxCatalog.workspaceDelete, workspace.ref, { requestId }).catch(() => undefined);
  }

  /** The whole session and its files; one in use goes when its last run or file call lets go. */
  async deleteSession(caller: Caller, session: string): Promise<{ id: string; object: 'session'; deleted: boolean }> {
    const r = await this.rpc.request(sandboxCatalog.workspaceDelete, { tenant: sessionTenantOf(caller), session });
    return { id: session, object: 'session', deleted: r.deleted };
  }

  async delete(caller: Caller, session: string, path: string): Promise<{ path: string; deleted: boolean }> {
    return this.rpc.request(sandboxCatalog.filesDelete, { tenant: sessionTenantOf(caller), session, path });
  }
}
