import { Controller } from '@nestjs/common';
import { sandboxCatalog, type SandboxRunReply, type SandboxRunRequest } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { RunCodeService } from './run-code.service.js';

@Controller()
export class RunController {
  constructor(private readonly runs: RunCodeService) {}

  @Handles(sandboxCatalog.run)
  run(req: SandboxRunRequest): Promise<SandboxRunReply> {
    return this.runs.run(req);
  }
}
