import { z } from 'zod';
import { COMMON_ERROR_CODES, subjectErrors, WireErrorSchema } from './wire-error.js';
import { defineEntry } from './rpc-entry.js';
import { healthEntry } from './health.js';
import { ListPageQueryShape } from './list-page.js';
import { SESSION_ID, SESSION_ID_RULE } from './session-id.js';

export const SANDBOX_ERROR_CODES = [
  ...COMMON_ERROR_CODES,
  'code_too_large',
  'invalid_timeout',
  'invalid_session',
  'invalid_path',
  'file_not_found',
  'file_too_large',
  'quota_exceeded',
  // A tenant holds as many session workspaces as the service allows: a new one is refused (not
  // retryable) until one is deleted or expires; its existing sessions keep working.
  'session_limit_reached',
  'sandbox_busy',
  'runtime_unavailable',
] as const;
export type SandboxErrorCode = (typeof SANDBOX_ERROR_CODES)[number];
/** One sandbox subject's codes: the common ones and those its handler can throw. */
const sandboxErrors = subjectErrors<SandboxErrorCode>();

// spec 01: a program is at most 256 KiB of source.
export const MAX_CODE_BYTES = 256 * 1024;
// spec 01: 30 s unless asked for longer, never more than 5 minutes.
export const DEFAULT_TIMEOUT_S = 30;
export const MAX_TIMEOUT_S = 300;
// Container start and teardown around a run's own limit: what a caller waits beyond `timeout_s`.
export const RUN_TIMEOUT_SLACK_S = 30;
// spec 01: the sandbox returns at most 64 KiB of each stream.
export const MAX_STREAM_BYTES = 64 * 1024;
// One file moved through a files subject fits a NATS message (1 MiB by default) after base64.
export const MAX_FILE_TRANSFER_BYTES = 512 * 1024;

export const TenantSchema = z.string().min(1).max(128);
export const SessionIdSchema = z.string().regex(SESSION_ID, `session id must match ${SESSION_ID_RULE}`);
export const RuntimeSchema = z.enum(['python', 'bash', 'node']);

// The wire takes any string as session id so that a malformed one is answered with the typed
// `invalid_session` (checked by the service against SessionIdSchema), not a generic bad_request.
const SessionField = z.string();

// Whose workspace a session id names. `session` (the default): a client's X-Drael-Session.
// `request`: the workspace of one gateway request that carries no session header (spec 01: a
// workspace for that request alone), in a namespace of its own, so that no session id a client
// sends (header or /v1/sessions) can ever name it. The gateway deletes it when the request ends.
export const WorkspaceScopeSchema = z.enum(['session', 'request']);
export type WorkspaceScope = z.infer<typeof WorkspaceScopeSchema>;

export const SandboxRunRequestSchema = z.object({
  tenant: TenantSchema,
  session: SessionField.optional(),
  scope: WorkspaceScopeSchema.optional(),
  runtime: RuntimeSchema,
  code: z.string(),
  timeout_s: z.number().optional(),
  network: z.boolean().optional(),
  // Names the run so that its caller can stop it (sandbox.run.cancel.v1), e.g. when the client of a
  // chat completion goes away mid-loop (issue 7).
  // A run id is held to the session id's alphabet and length (it names a container, never a path).
  run_id: z.string().regex(SESSION_ID).optional(),
});
export const SandboxRunReplySchema = z.object({
  ok: z.boolean(),
  exit_code: z.number().int().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.object({ stdout: z.boolean(), stderr: z.boolean() }),
  timed_out: z.boolean(),
  oom_killed: z.boolean(),
  duration_s: z.number().nonnegative(),
  // The run's changes to its session's files were not saved (quota_exceeded): its workspace holds
  // more than a save keeps (details.limit: workspace_entries or workspace_path_bytes, details.max),
  // or they would take the tenant's saved workspaces past its budget (details.stored_bytes,
  // details.max_stored_bytes). The run's output above is its own; its files stay on the replica
  // holding the session, lost if the session moves (its last saved copy is restored), until a
  // later call finds room again (e.g. after files are deleted) and saves it. Absent: saved, or a
  // run without a session. Optional: older sandboxes omit it.
  unsaved: WireErrorSchema.optional(),
});
export type SandboxRunRequest = z.infer<typeof SandboxRunRequestSchema>;
export type SandboxRunReply = z.infer<typeof SandboxRunReplySchema>;

const FileScope = { tenant: TenantSchema, session: SessionField, scope: WorkspaceScopeSchema.optional() };
export const FilePathSchema = z.string().min(1).max(1024);
// Names one upload in pieces (a file name on the sandbox's side: its staging file), chosen by the
// sender, e.g. a UUID: bounded and plain so that it can never name anything but that staging file.
export const UPLOAD_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const UploadIdSchema = z.string().regex(UPLOAD_ID, 'upload id must match [A-Za-z0-9_-]{1,64}');
export const FileEntrySchema = z.object({ path: z.string(), size: z.number().int().nonnegative(), modified_at: z.string() });

/** One session workspace of a tenant, as GET /v1/sessions lists it. Times are Unix seconds. */
export const SessionSummarySchema = z.object({
  id: z.string(),
  // What the session's files take on its volume (the `used_bytes` of its file listing), as of its last use.
  bytes: z.number().int().nonnegative(),
  created_at: z.number().int().nonnegative(),
  last_used_at: z.number().int().nonnegative(),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/**
 * How long a file call on a session may take. It may be the session's first (its volume made,
 * formatted and mounted, its placement recorded) or find it saved and not held (restored from
 * JetStream): on a loaded disk that took more than the 5 s it had (a test's first write into a new
 * session, twice in CI). Longer than the typed client's liveness window, so the call is watched
 * by heartbeats: a replica that dies is still noticed within ~5 s (docs/calling-services.md).
 */
export const SESSION_FILE_CALL_TIMEOUT_MS = 30_000;

export const sandboxCatalog = {
  health: healthEntry('sandbox'),
  run: defineEntry({
    subject: 'sandbox.run.v1',
    service: 'sandbox',
    request: SandboxRunRequestSchema,
    reply: SandboxRunReplySchema,
    errors: sandboxErrors('code_too_large', 'invalid_timeout', 'invalid_session', 'quota_exceeded', 'session_limit_reached', 'sandbox_busy', 'runtime_unavailable'),
    // The longest run plus container start and teardown.
    timeoutMs: (MAX_TIMEOUT_S + 30) * 1000,
    // The run's own limit (clamped as the service clamps it) plus the same slack: a 30 s run is
    // not waited for 330 s. A replica that dies mid-run is noticed sooner by its missing heartbeats.
    timeoutFor: (req) => (Math.min(Math.max(req.timeout_s ?? DEFAULT_TIMEOUT_S, 1), MAX_TIMEOUT_S) + RUN_TIMEOUT_SLACK_S) * 1000,
    // Never retried: the program may have run (and written files, or reached the network).
  }),
  runCancel: defineEntry({
    subject: 'sandbox.run.cancel.v1',
    service: 'sandbox',
    // Scoped by tenant: a caller can only stop its own account's runs. Delivered to EVERY sandbox
    // replica (a plain subscription, no queue group): only the replica running the run answers
    // {cancelled: true}; a cancel nobody runs gets no answer, so callers send it and move on.
    delivery: 'every-replica',
    request: z.object({ tenant: TenantSchema, run_id: z.string().min(1).max(64) }),
    reply: z.object({ run_id: z.string(), cancelled: z.boolean() }),
    errors: sandboxErrors(),
    timeoutMs: 2_000,
  }),
  // Deletes a workspace and its files (a request's workspace when its request ends). A workspace
  // in use is deleted when its last run or file call lets go of it.
  workspaceDelete: defineEntry({
    subject: 'sandbox.workspace.delete.v1',
    service: 'sandbox',
    request: z.object(FileScope),
    reply: z.object({ deleted: z.boolean() }),
    // quota_exceeded: the save that follows a routed call (the tenant's budget of saved bytes) is
    // on every routed subject's path; a deletion never grows a saved copy, so it is not met here.
    errors: sandboxErrors('invalid_session', 'quota_exceeded', 'session_limit_reached'),
    timeoutMs: 10_000,
  }),
  // A tenant's session workspaces (never request workspaces), one page at a time, ordered by
  // creation time then id (list-page.ts). `after` naming no session of the tenant is `bad_request`.
  sessionsList: defineEntry({
    subject: 'sandbox.sessions.list.v1',
    service: 'sandbox',
    request: z.object({ tenant: TenantSchema, ...ListPageQueryShape, after: SessionIdSchema.optional() }),
    reply: z.object({
      sessions: z.array(SessionSummarySchema),
      has_more: z.boolean(),
      // How many sessions the tenant holds and may hold (SANDBOX_MAX_SESSIONS_PER_TENANT).
      total: z.number().int().nonnegative(),
      max_sessions: z.number().int().positive(),
      // What the tenant's saved copies take in the shared store (its sessions' and its request
      // workspaces') and the most they may (SANDBOX_TENANT_STORE_MAX_MB; null: no budget).
      // Optional: older sandboxes omit them.
      stored_bytes: z.number().int().nonnegative().optional(),
      max_stored_bytes: z.number().int().positive().nullable().optional(),
    }),
    errors: sandboxErrors(),
    timeoutMs: 5_000,
    idempotent: true,
  }),
  filesList: defineEntry({
    subject: 'sandbox.files.list.v1',
    service: 'sandbox',
    request: z.object(FileScope),
    // free_bytes: what a write may still add now (the filesystem keeps some of the quota for
    // itself, so it is less than quota_bytes - used_bytes). Optional: older sandboxes omit it.
    // truncated: the session holds more files than one listing names (the first 2,000 found);
    // optional, as older sandboxes omit it.
    reply: z.object({
      files: z.array(FileEntrySchema),
      truncated: z.boolean().optional(),
      used_bytes: z.number().int().nonnegative(),
      quota_bytes: z.number().int(),
      free_bytes: z.number().int().nonnegative().optional(),
    }),
    // quota_exceeded: as workspaceDelete's (a listing saves nothing).
    errors: sandboxErrors('invalid_session', 'quota_exceeded', 'session_limit_reached'),
    timeoutMs: SESSION_FILE_CALL_TIMEOUT_MS,
    idempotent: true,
  }),
  filesRead: defineEntry({
    subject: 'sandbox.files.read.v1',
    service: 'sandbox',
    // offset: where to start reading, so a file larger than one message is read in pieces.
    // truncated: bytes remain after this piece.
    request: z.object({ ...FileScope, path: FilePathSchema, max_bytes: z.number().int().positive().optional(), offset: z.number().int().nonnegative().optional() }),
    reply: z.object({ path: z.string(), content_base64: z.string(), size: z.number().int(), truncated: z.boolean() }),
    errors: sandboxErrors('invalid_session', 'invalid_path', 'file_not_found', 'quota_exceeded', 'session_limit_reached'),
    timeoutMs: SESSION_FILE_CALL_TIMEOUT_MS,
    idempotent: true,
  }),
  filesWrite: defineEntry({
    subject: 'sandbox.files.write.v1',
    service: 'sandbox',
    // A file larger than one message (MAX_FILE_TRANSFER_BYTES) is written in pieces of one
    // upload: every piece carries the same `upload` id; the first has no `append`, the others
    // `append`; every piece but the last says `more`. The pieces gather in a staging file the
    // path's readers never see, and the last one puts the whole file under `path` at once
    // (rename): until then `path` keeps its old content or stays absent, so an upload cut off
    // (its sender died, a piece failed) leaves the file as it was. Its staged data is dropped by
    // filesDelete with the same `upload`, or by the sandbox once no piece came for
    // SANDBOX_UPLOAD_ABANDONED_S; it is never listed or saved. A piece whose earlier pieces are
    // gone (the session moved to another replica meanwhile) is refused: the upload starts over.
    // The session is saved with the last piece only (a save re-reads and stores the whole file:
    // piece by piece, an upload cost the square of its size). A write without `upload` and
    // without `append` replaces the file at once the same way; `append` without `upload` (a
    // sender from before uploads were staged) appends to `path` itself, in place.
    request: z.object({
      ...FileScope,
      path: FilePathSchema,
      content_base64: z.string(),
      append: z.boolean().optional(),
      more: z.boolean().optional(),
      upload: UploadIdSchema.optional(),
    }),
    reply: z.object({ path: z.string(), size: z.number().int() }),
    errors: sandboxErrors('invalid_session', 'invalid_path', 'file_not_found', 'file_too_large', 'quota_exceeded', 'session_limit_reached'),
    timeoutMs: SESSION_FILE_CALL_TIMEOUT_MS,
  }),
  filesDelete: defineEntry({
    subject: 'sandbox.files.delete.v1',
    service: 'sandbox',
    // With `upload`: drops what that upload staged (a sender giving up on it), never `path`'s file.
    request: z.object({ ...FileScope, path: FilePathSchema, upload: UploadIdSchema.optional() }),
    reply: z.object({ path: z.string(), deleted: z.boolean() }),
    errors: sandboxErrors('invalid_session', 'invalid_path', 'file_not_found', 'quota_exceeded', 'session_limit_reached'),
    timeoutMs: SESSION_FILE_CALL_TIMEOUT_MS,
  }),
} as const;

/**
 * Per-replica subjects: `sandbox.instance.<replica>.<catalog subject>`, one plain subscription per
 * sandbox replica (no queue group). A replica that receives (through the queue group) a call on a
 * session another live replica holds forwards it there, on the holder's subject of the same
 * catalog entry, with the same request schema and reply envelope. Internal to the sandbox
 * (callers use the catalog subjects above, which route), so not in the catalog: the boot check
 * covers the queue-group subjects, and these are handled by one listener (apps/sandbox
 * src/placement/session-router.ts) for exactly the entries below.
 */
export const SANDBOX_ROUTED_ENTRIES = ['run', 'workspaceDelete', 'filesList', 'filesRead', 'filesWrite', 'filesDelete'] as const satisfies readonly (keyof typeof sandboxCatalog)[];
const REPLICA_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function sandboxInstanceSubject(replica: string, subject: string): string {
  if (!REPLICA_ID.test(replica)) throw new Error(`replica id ${replica} is not [a-z0-9-]`);
  return `sandbox.instance.${replica}.${subject}`;
}
