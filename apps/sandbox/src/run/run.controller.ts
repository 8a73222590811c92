import { Controller } from '@nestjs/common';
import { sandboxCatalog, type SandboxRunReply, type SandboxRunRequest } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { SessionRouter } from '../placement/session-router.js';
import { answering } from '../after-answer.js';
import { RunCodeService } from './run-code.service.js';
import { assertCodeSize, resolveTimeoutS, runWaitMs } from './run-limits.js';
import { RunRegistry } from './run-registry.js';

/**
 * sandbox.run.v1 (queue group: one replica takes each run; a run in a session is routed to the
 * replica holding the session, placement/session-router.ts). Its cancel, sandbox.run.cancel.v1,
 * is not handled here: it is a broadcast every replica hears (RunCancelListener), so it reaches
 * the replica the run was routed to.
 */
@Controller()
export class RunController {
  constructor(
    private readonly runs: RunCodeService,
    private readonly registry: RunRegistry,
    private readonly router: SessionRouter,
  ) {
    router.register({
      entry: sandboxCatalog.run,
      create: true,
      mutates: true,
      needsFiles: true,
      // Without the network a run does nothing outside its workspace and its answer: it may run
      // while its placement is read (dropped and run again where it belongs if that says so).
      runsBeside: (req) => req.network !== true,
      // The input is refused before a session is placed or created (the service checks it again).
      validate: (req) => {
        assertCodeSize(req.code);
        resolveTimeoutS(req.timeout_s);
      },
      // As long as the caller waits: the run's own timeout plus container start and teardown.
      timeoutMs: (req) => runWaitMs(req),
      local: (req, _placed, stop) => this.runHere(req, stop),
      // The program ran: its output reaches the caller even when its files cannot be saved.
      answerUnsaved: (reply, refused) => ({ ...reply, unsaved: refused.toWire() }),
    });
  }

  @Handles(sandboxCatalog.run)
  run(req: SandboxRunRequest): Promise<SandboxRunReply> {
    // The run's container teardown and the next container's preparation wait for this answer.
    return answering(() => this.router.call(sandboxCatalog.run, req));
  }

  /** `stop`: the router's, when the run went ahead of its placement and must not finish here. */
  private async runHere(req: SandboxRunRequest, stop?: AbortSignal): Promise<SandboxRunReply> {
    if (req.run_id === undefined) return this.runs.run(req, stop);
    // A named run can be stopped by its caller (e.g. the client of a chat completion went away).
    const tracked = this.registry.track(req.tenant, req.run_id);
    try {
      return await this.runs.run(req, stop ? AbortSignal.any([tracked.signal, stop]) : tracked.signal);
    } finally {
      tracked.done();
    }
  }
}
