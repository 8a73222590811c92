import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TOOL_METER, type PaidTool, type Plan } from '@drael/contracts';
import { PLANS } from './plans.js';

@Injectable()
export class PlansService {
  private readonly byId = new Map(PLANS.map((p) => [p.id, p]));
  /** A strong ETag over the published figures: it changes exactly when a figure does. */
  readonly etag = `"${createHash('sha256').update(JSON.stringify(PLANS)).digest('base64url').slice(0, 27)}"`;

  list(): readonly Plan[] {
    return PLANS;
  }

  /** For each plan that includes `tool`: its weekly figure of the tool's meter. */
  allowancesFor(tool: PaidTool): Record<string, number> {
    return Object.fromEntries(PLANS.filter((p) => p.tools.includes(tool)).map((p) => [p.id, p.weekly[TOOL_METER[tool]]]));
  }

  find(id: string): Plan | undefined {
    return this.byId.get(id);
  }
}
