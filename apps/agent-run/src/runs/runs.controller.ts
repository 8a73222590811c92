import { Controller } from '@nestjs/common';
import { agentRunCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { SpendClient } from '../spend/spend.client.js';
import { RunsService } from './runs.service.js';

type Req<K extends keyof typeof agentRunCatalog> = ParsedRequestOf<(typeof agentRunCatalog)[K]>;

@Controller()
export class RunsController {
  constructor(
    private readonly runs: RunsService,
    private readonly spend: SpendClient,
  ) {}

  @Handles(agentRunCatalog.createRun)
  create(req: Req<'createRun'>) {
    return this.runs.create(req.account_id, req.agent_id, req.tool_level, req.task, req.idempotency_key);
  }

  @Handles(agentRunCatalog.getRun)
  get(req: Req<'getRun'>) {
    return this.runs.get(req.account_id, req.run_id);
  }

  @Handles(agentRunCatalog.listRuns)
  async list(req: Req<'listRuns'>) {
    return this.runs.list(req.account_id, req, req.agent_id);
  }

  @Handles(agentRunCatalog.listSteps)
  async steps(req: Req<'listSteps'>) {
    return { steps: await this.runs.steps(req.account_id, req.run_id) };
  }

  @Handles(agentRunCatalog.listReceipts)
  receipts(req: Req<'listReceipts'>) {
    return this.runs.receipts(req.account_id, req.run_id);
  }

  @Handles(agentRunCatalog.cancelRun)
  cancel(req: Req<'cancelRun'>) {
    return this.runs.cancel(req.account_id, req.run_id);
  }

  @Handles(agentRunCatalog.verifyRun)
  verify(req: Req<'verifyRun'>) {
    return this.runs.verify(req.account_id, req.run_id);
  }

  @Handles(agentRunCatalog.runEvents)
  events(req: Req<'runEvents'>) {
    return this.runs.events(req.account_id, req.run_id, req.after, req.wait_ms);
  }

  @Handles(agentRunCatalog.publicKey)
  // Billing signs receipts; its published keys are the ones to verify against.
  publicKey() {
    return this.spend.publishedKeys();
  }
}
