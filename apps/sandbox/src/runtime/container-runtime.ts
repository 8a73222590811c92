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
  /** Creates containers ahead of demand where the runtime can (never started before a run). */
  warmUp(): void;
  run(spec: ContainerRunSpec, signal?: AbortSignal): Promise<ContainerRunResult>;
  close(): Promise<void>;
}
export const CONTAINER_RUNTIME = Symbol('CONTAINER_RUNTIME');
