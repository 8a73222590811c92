import { Controller } from '@nestjs/common';
import { sandboxCatalog, type SandboxRunReply, type SandboxRunRequest } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { RunCodeService } from './run-code.service.js';

@Controller()
export class RunController {
  // Runs that carry a run_id, so that their caller can stop them (keyed by tenant: no cross-account cancel).
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly runs: RunCodeService) {}

  @Handles(sandboxCatalog.run)
  async run(req: SandboxRunRequest): Promise<SandboxRunReply> {
    if (req.run_id === undefined) return this.runs.run(req);
    const key = `${req.tenant}/${req.run_id}`;
    const abort = new AbortController();
    this.running.set(key, abort);
    try {
      return await this.runs.run(req, abort.signal);
    } finally {
      if (this.running.get(key) === abort) this.running.delete(key);
    }
  }

  /** Stops a run in progress (its container is killed); the run answers as it would on a kill. */
  @Handles(sandboxCatalog.runCancel)
  cancel(req: { tenant: string; run_id: string }): { run_id: string; cancelled: boolean } {
    const abort = this.running.get(`${req.tenant}/${req.run_id}`);
    abort?.abort();
    return { run_id: req.run_id, cancelled: abort !== undefined };
  }
}
