import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { baseEnvShape, envInt } from '@drael/config';

// JetStream bucket names: letters, digits, - and _.
const bucketName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{0,64}$/, 'letters, digits, - and _')
  .default('');

export const configSchema = z.object({
  ...baseEnvShape,
  DOCKER_SOCKET: z.string().min(1).default('/var/run/docker.sock'),
  // Built by infra/sandbox-image/build.sh (provision and bring-up).
  SANDBOX_IMAGE: z.string().min(1).default('drael-sandbox:latest'),
  // Labels this installation's containers, so a restart removes its own leftovers and no others.
  SANDBOX_INSTANCE: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lowercase letters, digits and -')
    .default('default'),
  // Session volumes and per-run program files live here; root-only.
  SANDBOX_STATE_DIR: z.string().startsWith('/', 'must be absolute').default('/var/lib/drael/sandbox'),
  // Runs at once: near the core count, since a run may use a whole CPU.
  SANDBOX_MAX_CONCURRENT: envInt(1, 256).default(Math.max(1, availableParallelism())),
  // Runs waiting for a slot; beyond it a run is refused with the retryable sandbox_busy.
  SANDBOX_MAX_QUEUE: envInt(0, 10_000).default(32),
  // One tenant's share of those (issue F8: one request's parallel runs took them all). Unset: half
  // the slots and a quarter of the queue, at least 1 each (packages/fair-slots, tenantShareOf), so
  // whatever one tenant sends, half the slots are there for the others. A single-tenant
  // installation sets them to SANDBOX_MAX_CONCURRENT and SANDBOX_MAX_QUEUE.
  SANDBOX_MAX_CONCURRENT_PER_TENANT: envInt(1, 256).optional(),
  SANDBOX_MAX_QUEUE_PER_TENANT: envInt(1, 10_000).optional(),
  // spec 01: memory, CPU and process count are bounded per run.
  SANDBOX_MEMORY_MB: envInt(32, 65_536).default(512),
  SANDBOX_CPUS: z.coerce.number().min(0.1).max(64).default(1),
  SANDBOX_PIDS: envInt(16, 4096).default(128),
  SANDBOX_NOFILE: envInt(64, 65_536).default(1024),
  SANDBOX_TMP_MB: envInt(1, 4096).default(64),
  // issue 3: a per-session disk quota (256 MiB).
  SANDBOX_SESSION_QUOTA_MB: envInt(8, 65_536).default(256),
  // What a workspace may hold for a save (its manifest): names (files, directories, symlinks, and
  // each hard link on its own, which costs no inode) and MB of the paths and link targets the
  // manifest carries. Twice the default volume's 16,384 inodes (a copy of a tree hard-linked beside
  // it fits), and 8 MB of paths (256 bytes a name at that count; a node_modules tree averages
  // ~100). A hard link at PATH_MAX depth costs 4 KB of manifest and no inode, so without these a
  // run made manifests of 200 MB and more. Past them a save is refused with quota_exceeded
  // (details.limit: workspace_entries or workspace_path_bytes); the files stay on the replica's
  // disk unsaved until a later save fits (a run is still answered, its reply's `unsaved` says so).
  SANDBOX_WORKSPACE_MAX_ENTRIES: envInt(1024, 10_000_000).default(32_768),
  SANDBOX_WORKSPACE_MAX_PATH_MB: envInt(1, 1024).default(8),
  // A request's workspace (scope request) is deleted by the gateway when its request ends; one
  // left behind (the gateway died mid-request) is removed once unused and this old. Far above the
  // longest request (6 turns of at most 300 s runs each).
  SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S: envInt(1, 7 * 86_400).default(6 * 3600),
  // A tenant's session workspace that no run or file call has used for this long is deleted with
  // its files, so abandoned sessions do not fill the disk. 0 keeps sessions until deleted.
  SANDBOX_SESSION_MAX_IDLE_S: envInt(0, 366 * 86_400).default(14 * 86_400),
  // A file upload in pieces (sandbox.files.write.v1 `upload`) that no piece has reached for this
  // long was cut off (its gateway died): its staged data is deleted at the workspace's next file
  // call or mount. A live upload's pieces follow each other within one piece's timeout (5 s).
  SANDBOX_UPLOAD_ABANDONED_S: envInt(1, 86_400).default(60),
  // Session workspaces one tenant may hold (each up to SANDBOX_SESSION_QUOTA_MB of disk); one more
  // is refused with session_limit_reached. Request workspaces do not count.
  SANDBOX_MAX_SESSIONS_PER_TENANT: envInt(1, 1_000_000).default(50),
  // The workspace of a run that names none: its container's own tmpfs, counted in the run's memory
  // and gone with it (run/run-workspace.ts).
  SANDBOX_SCRATCH_MB: envInt(1, 4096).default(64),
  SANDBOX_EGRESS_NETWORK: z
    .string()
    .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/)
    .default('drael-sandbox-egress'),
  // Linux interface names are at most 15 characters.
  SANDBOX_EGRESS_BRIDGE: z
    .string()
    .regex(/^[a-z0-9-]{1,15}$/)
    .default('drael-sbx0'),
  SANDBOX_EGRESS_SUBNET: z
    .string()
    .regex(/^\d+\.\d+\.\d+\.\d+\/\d+$/)
    .default('172.30.250.0/24'),
  // The engine's OCI runtime for run containers (e.g. `runsc`, gVisor, registered with the engine
  // as `dockerd --add-runtime`); empty: the engine's default (runc).
  SANDBOX_OCI_RUNTIME: z
    .string()
    .regex(/^[a-zA-Z0-9_.-]*$/, 'a runtime name')
    .default(''),
  // The pool of fresh workspaces (run/run-workspace.ts): containers prepared (created and started,
  // waiting for their run) ahead of demand, each on an empty workspace, per runtime: this many for
  // runs without a session and this many for a request's first run; a workspace also gets one
  // prepared for its next run. 0 turns all of it off.
  SANDBOX_WARM_POOL: envInt(0, 32).default(2),
  // Sessions across replicas (placement/): this replica's name in the placement KV and on its
  // per-replica subjects. Empty: SANDBOX_INSTANCE plus a random suffix, new at every start (a
  // restarted process is a new replica: it restores what it is asked for, never trusts its disk).
  SANDBOX_REPLICA_ID: z
    .string()
    .regex(/^([a-z0-9][a-z0-9-]{0,62})?$/, 'lowercase letters, digits and -')
    .default(''),
  // A replica whose heartbeat is older than this is dead: its sessions are taken over (restored
  // from the Object Store) by the next replica that receives one. Heartbeats go every third of it.
  SANDBOX_REPLICA_TTL_S: envInt(2, 300).default(10),
  // JetStream buckets: session placement (KV), replica heartbeats (KV, entries expire after the
  // TTL above) and the saved workspaces (Object Store). Empty: derived from DRAEL_NATS_PREFIX, so
  // two installations (or two tests) sharing one NATS never share a bucket.
  SANDBOX_PLACEMENT_BUCKET: bucketName,
  SANDBOX_REPLICAS_BUCKET: bucketName,
  SANDBOX_WORKSPACE_BUCKET: bucketName,
  // Chunks of a saved content whose upload its replica died in the middle of are named by nothing;
  // they are removed once their newest chunk is this old (an upload in progress is unnamed too
  // until it ends: far above a content's upload time, which the session quota bounds).
  SANDBOX_CUT_UPLOAD_GRACE_S: envInt(1, 86_400).default(900),
  // JetStream replicas of those buckets when they are created: 1 on a single NATS server; 3 on a
  // NATS cluster, so the saved workspaces outlive the loss of a NATS node too.
  // How often this replica checks its container engine and JetStream to stay in the queue group,
  // and how many failed rounds in a row make it leave (until a round passes): a replica that cannot
  // run anything gets no runs, the healthy ones get them all (nats-rpc queue-membership.ts).
  // 0: never leaves.
  SANDBOX_QUEUE_HEALTH_INTERVAL_MS: envInt(0, 600_000).default(5_000),
  SANDBOX_QUEUE_HEALTH_FAILURES: envInt(1, 100).default(3),
  // The most the saved workspaces (the Object Store) may hold, in MB; 0: no bound of their own.
  // Set it below the NATS server's JetStream storage: the placement records and heartbeats share
  // that storage, and saved sessions that fill it would stop every tenant's calls, not only the
  // saving one's (multi-replica pass, F3). Applied to the bucket at every boot.
  SANDBOX_STORE_MAX_MB: z.coerce.number().int().min(0).max(100_000_000).default(0),
  // The most one tenant's saved workspaces (its sessions' and its requests' saved copies in the
  // Object Store) may take, in MB; 0: no bound per tenant. A save that would take the tenant past it
  // is refused with quota_exceeded (its call fails, its files stay on the replica's disk unsaved
  // until a later save fits), so that one tenant cannot fill SANDBOX_STORE_MAX_MB for the others.
  // Without it, SANDBOX_MAX_SESSIONS_PER_TENANT × SANDBOX_SESSION_QUOTA_MB (12.5 GB by default) is
  // the only bound. Deleting files or sessions always fits.
  SANDBOX_TENANT_STORE_MAX_MB: envInt(0, 100_000_000).default(1024),
  SANDBOX_STORE_REPLICAS: z.coerce
    .number()
    .pipe(z.union([z.literal(1), z.literal(3), z.literal(5)]))
    .default(1),
});
export type SandboxConfig = z.infer<typeof configSchema>;
export const SANDBOX_CONFIG = Symbol('SANDBOX_CONFIG');
