import type { Runtime } from '../run/runtimes.js';

/**
 * A run's /work, as the container engine sees it (which workspace a run gets is decided in
 * run/run-workspace.ts):
 * - `held`: a directory on the host the caller holds while the run lasts, bound at /work (a
 *   session's volume, a request's workspace);
 * - `own`: an empty tmpfs of the container's own (SANDBOX_SCRATCH_MB), gone with it: the files
 *   of a run that names no workspace are nobody's after it.
 */
export type WorkspaceMount = { kind: 'held'; path: string } | { kind: 'own' };

/**
 * Who a fresh workspace from the pool is for: one run (its container's own tmpfs), or a request,
 * whose workspace outlives the run (a tmpfs mounted on the host, handed to the workspace service).
 */
export type FreshFor = 'run' | 'request';

/** Everything the engine needs to run one program in one fresh container. */
export interface ContainerRunSpec {
  runtime: Runtime;
  /** The program; the runtime writes it to a file mounted read-only at /sandbox. */
  code: string;
  workspace: WorkspaceMount;
  network: boolean;
  timeoutMs: number;
  maxStreamBytes: number;
}

export interface ContainerRunResult {
  exitCode: number | null;
  stdout: Buffer;
  stderr: Buffer;
  truncated: { stdout: boolean; stderr: boolean };
  timedOut: boolean;
  oomKilled: boolean;
  durationS: number;
}

/**
 * The one interface in front of the container engine. The implementation owns isolation
 * (limits, user, mounts, network), the host-side timer, and removal of every container it made.
 */
export interface ContainerRuntime {
  /** Removes containers this instance left behind (a crash or restart mid-run). */
  removeLeftovers(): Promise<number>;
  /** Creates the egress network if missing. */
  ensureEgressNetwork(): Promise<void>;
  hasImage(): Promise<boolean>;
  /** Health: the engine answers (and still has the run image). */
  ping(): Promise<void>;
  /**
   * Fills the pool of fresh workspaces: containers prepared ahead of demand (created, started,
   * waiting for their run; each runs one program at most), each on an empty workspace of its own,
   * per runtime and for each of `FreshFor`. A run with an `own` workspace takes one of the pool's
   * `run` entries (or is prepared on the spot when none is ready, or it needs the network).
   */
  warmUp(): void;
  /**
   * A fresh, empty, size-bounded workspace directory for a request (a tmpfs on the host) with a
   * container already prepared on it for `runtime`, from the pool; the caller owns the directory
   * (unmounts it) from then on, for the workspace's whole life. Undefined when none is ready.
   */
  takeFreshWorkspace(runtime: Runtime): Promise<string | undefined>;
  /** Prepares a container for the next run in this workspace dir (call while the dir is held). */
  prepareFor(dir: string, runtime: Runtime): void;
  /** Disposes the containers prepared on this dir: called before the dir is unmounted. */
  releaseDir(dir: string): Promise<void>;
  run(spec: ContainerRunSpec, signal?: AbortSignal): Promise<ContainerRunResult>;
  close(): Promise<void>;
}
export const CONTAINER_RUNTIME = Symbol('CONTAINER_RUNTIME');
