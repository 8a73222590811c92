import { Inject, Injectable } from '@nestjs/common';
import type { SandboxRunRequest } from '@drael/contracts';
import { CONTAINER_RUNTIME, type ContainerRuntime, type WorkspaceMount } from '../runtime/container-runtime.js';
import { QUOTA_HEADROOM_BYTES, WorkspaceService } from '../workspace/workspace.service.js';
import { SandboxError } from '../sandbox-error.js';

/** A run's /work while the run lasts; `release()` once it is done. */
export interface RunWorkspace {
  readonly mount: WorkspaceMount;
  /** After the run: a container is prepared on a workspace that outlives it, for its next run. */
  prepareNext(): void;
  release(): Promise<void>;
}

const NOTHING_HELD: Omit<RunWorkspace, 'mount'> = { prepareNext: () => undefined, release: () => Promise.resolve() };

/**
 * Which workspace a run gets: one of three, decided here alone.
 *
 * - **session** (`session`, scope `session`): the client's session, "files live under the session
 *   named by X-Drael-Session" (spec 01): its volume (quota, placement, saved copy: workspace/).
 * - **request** (`session`, scope `request`): "a request with no session header gets a workspace
 *   for that request alone" (spec 01). The gateway names one per request (a random id in a
 *   namespace no client can name), shared by every run and file call of that request, and deletes
 *   it when the request ends. A new one comes from the pool of fresh workspaces, ready-made.
 * - **none** (no `session`): a run that names no workspace, such as agent-run's `sandbox_execute`
 *   (spec 03: each execution in an isolated sandbox). Its files are its own and go with its
 *   container; nothing it writes is readable later. Taken from the same pool (a container on an
 *   empty tmpfs of its own), so it pays no create or start either.
 */
@Injectable()
export class RunWorkspaces {
  constructor(
    @Inject(CONTAINER_RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly workspaces: WorkspaceService,
  ) {
    // A container prepared on a workspace goes before the workspace is unmounted.
    workspaces.onBeforeUnmount((dir) => runtime.releaseDir(dir));
  }

  async acquire(req: SandboxRunRequest): Promise<RunWorkspace> {
    if (req.session === undefined) return { mount: { kind: 'own' }, ...NOTHING_HELD };
    // A new request workspace comes ready-made: a tmpfs with a container already started on it
    // (a network run needs a container of its own, so its workspace is made the usual way).
    const fresh = req.scope === 'request' && req.network !== true ? () => this.runtime.takeFreshWorkspace(req.runtime) : undefined;
    const ws = await this.workspaces.acquire({ tenant: req.tenant, session: req.session, scope: req.scope }, { create: true, fresh });
    if (!ws) throw new Error('workspace missing after create');
    try {
      // issue 3: a session (or request workspace) with less than the headroom left is full. A
      // fresh one from the pool is empty (its whole quota, at least 8 MiB, is free): not asked.
      if (!ws.fresh && (await ws.usage()).freeBytes < QUOTA_HEADROOM_BYTES) {
        throw new SandboxError('quota_exceeded', `the session workspace quota (${this.workspaces.quotaBytes} bytes) is used up; delete files first`, false, {
          quota_bytes: this.workspaces.quotaBytes,
        });
      }
    } catch (err) {
      await ws.release();
      throw err;
    }
    return {
      mount: { kind: 'held', path: ws.path },
      // Prepared while the workspace is held, so it cannot be unmounted under the preparation.
      prepareNext: () => this.runtime.prepareFor(ws.path, req.runtime),
      release: () => ws.release(),
    };
  }
}
