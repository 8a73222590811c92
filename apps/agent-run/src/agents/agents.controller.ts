import { Controller } from '@nestjs/common';
import { agentRunCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { AgentsService } from './agents.service.js';

type Req<K extends keyof typeof agentRunCatalog> = ParsedRequestOf<(typeof agentRunCatalog)[K]>;

@Controller()
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Handles(agentRunCatalog.createAgent)
  create(req: Req<'createAgent'>) {
    return this.agents.create(req.account_id, req.tool_level, req.agent);
  }

  @Handles(agentRunCatalog.getAgent)
  get(req: Req<'getAgent'>) {
    return this.agents.get(req.account_id, req.agent_id);
  }

  @Handles(agentRunCatalog.listAgents)
  async list(req: Req<'listAgents'>) {
    return this.agents.list(req.account_id, req);
  }

  @Handles(agentRunCatalog.updateAgent)
  update(req: Req<'updateAgent'>) {
    return this.agents.update(req.account_id, req.agent_id, req.tool_level, req.patch);
  }

  @Handles(agentRunCatalog.deleteAgent)
  delete(req: Req<'deleteAgent'>) {
    return this.agents.delete(req.account_id, req.agent_id, req.tool_level);
  }
}
