import { Controller } from '@nestjs/common';
import { sandboxCatalog, type SandboxRunReply, type SandboxRunRequest } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { RunCodeService } from './run-code.service.js';
import { RunRegistry } from './run-registry.js';

/**
 * sandbox.run.v1 (queue group: one replica takes each run). Its cancel, sandbox.run.cancel.v1,
 * is not handled here: it is a broadcast every replica hears (RunCancelListener).
 */
@Controller()
export class RunController {
  constructor(
    private readonly runs: RunCodeService,
    private readonly registry: RunRegistry,
  ) {}

  @Handles(sandboxCatalog.run)
  async run(req: SandboxRunRequest): Promise<SandboxRunReply> {
    if (req.run_id === undefined) return this.runs.run(req);
    // A named run can be stopped by its caller (e.g. the client of a chat completion went away).
    const tracked = this.registry.track(req.tenant, req.run_id);
    try {
      return await this.runs.run(req, tracked.signal);
    } finally {
      tracked.done();
    }
  }
}
