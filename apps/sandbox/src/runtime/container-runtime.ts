import type { Runtime } from '../run/runtimes.js';

/** Where a run's /work comes from: a session volume mounted on the host, or a throwaway tmpfs. */
export type WorkspaceMount = { kind: 'host-dir'; path: string } | { kind: 'scratch'; bytes: number };

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
   * Prepares containers ahead of demand (created, started, waiting for their run; each runs one
   * program at most): for session-less runs, and for first runs of a request's workspace.
   */
  warmUp(): void;
  /**
   * A fresh, empty, size-bounded workspace directory (a tmpfs on the host) with a container
   * already prepared on it for `runtime`; the caller owns the directory (unmounts it) from then
   * on, for the workspace's whole life. Undefined when none is ready.
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
