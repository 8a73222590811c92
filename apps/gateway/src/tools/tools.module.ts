import { Module } from '@nestjs/common';
import { WorkspacesModule } from '../sessions/workspaces.module.js';
import { BillingHolds } from './billing-holds.js';
import { ToolCatalogue } from './catalogue.service.js';
import { GenerateImageTool } from './generate-image.tool.js';
import { BreachLookupTool, ContactLookupTool } from './lookup.tools.js';
import { RunCodeTool } from './run-code.tool.js';
import { ServiceHealth } from './service-health.js';
import { SpawnAgentTool } from './spawn-agent.tool.js';
import { WebFetchTool } from './web-fetch.tool.js';
import { WebSearchTool } from './web-search.tool.js';

/** Drael's tool adapters and the catalogue; importable by any feature (the Responses API reuses web_search/web_fetch). */
@Module({
  imports: [WorkspacesModule],
  providers: [ServiceHealth, BillingHolds, RunCodeTool, WebSearchTool, WebFetchTool, GenerateImageTool, BreachLookupTool, ContactLookupTool, SpawnAgentTool, ToolCatalogue],
  exports: [ServiceHealth, RunCodeTool, WebSearchTool, WebFetchTool, GenerateImageTool, BreachLookupTool, ContactLookupTool, SpawnAgentTool, ToolCatalogue],
})
export class ToolsModule {}
