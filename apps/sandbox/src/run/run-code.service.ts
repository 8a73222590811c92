import { Inject, Injectable } from '@nestjs/common';
import { MAX_STREAM_BYTES, type SandboxRunReply, type SandboxRunRequest } from '@drael/contracts';
import { inSpan } from '@drael/tracing';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { CONTAINER_RUNTIME, type ContainerRuntime } from '../runtime/container-runtime.js';
import { decodeOutput } from '../runtime/output-capture.js';
import { EgressGuard } from '../network/egress-guard.js';
import { assertSessionId, WorkspaceService } from '../workspace/workspace.service.js';
import { assertCodeSize, resolveTimeoutS, startDeadlineOf } from './run-limits.js';
import { RunSlots, tenantShareOf } from './run-slots.js';
import { RunWorkspaces, type RunWorkspace } from './run-workspace.js';
import { measureRun, watchSandbox } from '../sandbox.metrics.js';

/** The answer of a run cancelled before its container started: it did not run. */
const NOT_RUN: SandboxRunReply = {
  ok: false,
  exit_code: null,
  stdout: '',
  stderr: '',
  truncated: { stdout: false, stderr: false },
  timed_out: false,
  oom_killed: false,
  duration_s: 0,
};

/** One program, one fresh container: input limits first, then a slot, a workspace, the run. */
@Injectable()
export class RunCodeService {
  readonly slots: RunSlots;

  constructor(
    @Inject(SANDBOX_CONFIG) config: SandboxConfig,
    @Inject(CONTAINER_RUNTIME) private readonly runtime: ContainerRuntime,
    workspaces: WorkspaceService,
    private readonly runWorkspaces: RunWorkspaces,
    private readonly egress: EgressGuard,
  ) {
    this.slots = new RunSlots(tenantShareOf(config));
    watchSandbox({ slots: () => this.slots.stats, sessions: () => workspaces.trackedVolumes });
  }

  run(req: SandboxRunRequest, signal?: AbortSignal): Promise<SandboxRunReply> {
    return measureRun(req.runtime, () => this.runMeasured(req, signal));
  }

  private async runMeasured(req: SandboxRunRequest, signal?: AbortSignal): Promise<SandboxRunReply> {
    const receivedAt = Date.now();
    // Everything about the input is refused before any container or volume exists.
    assertCodeSize(req.code);
    const timeoutS = resolveTimeoutS(req.timeout_s);
    if (req.session !== undefined) assertSessionId(req.session);
    if (req.network) await this.egress.assertReady();

    // The tenant's fair share of the slots; a run left waiting past its caller's patience, or
    // cancelled while it waits, leaves the queue without starting.
    let release: () => void;
    try {
      release = await this.slots.acquire(req.tenant, { deadline: startDeadlineOf(req, receivedAt), signal });
    } catch (err) {
      if (signal?.aborted) return NOT_RUN;
      throw err;
    }
    let ws: RunWorkspace | undefined;
    try {
      // Cancelled while it waited for a slot (or before it arrived): no container is started.
      if (signal?.aborted) return NOT_RUN;
      ws = await this.runWorkspaces.acquire(req);
      const spec = { runtime: req.runtime, code: req.code, workspace: ws.mount, network: req.network === true, timeoutMs: timeoutS * 1000, maxStreamBytes: MAX_STREAM_BYTES };
      // The container's own span (take a prepared one or create it, run, wait, remove), after the slot and workspace.
      const r = await inSpan('container run', { attributes: { 'drael.sandbox.runtime': req.runtime, 'drael.sandbox.network': spec.network } }, async (span) => {
        const result = await this.runtime.run(spec, signal);
        span.setAttributes({ 'process.exit.code': result.exitCode ?? undefined, 'drael.sandbox.timed_out': result.timedOut, 'drael.sandbox.oom_killed': result.oomKilled });
        return result;
      });
      // The workspace's next run finds its container ready.
      ws.prepareNext();
      return {
        ok: r.exitCode === 0 && !r.timedOut && !r.oomKilled,
        exit_code: r.exitCode,
        stdout: decodeOutput(r.stdout),
        stderr: decodeOutput(r.stderr),
        truncated: r.truncated,
        timed_out: r.timedOut,
        oom_killed: r.oomKilled,
        duration_s: r.durationS,
      };
    } finally {
      await ws?.release();
      release();
    }
  }
}
