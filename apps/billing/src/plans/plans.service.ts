import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Plan } from '@drael/contracts';
import { PLANS } from './plans.js';

@Injectable()
export class PlansService {
  private readonly byId = new Map(PLANS.map((p) => [p.id, p]));
  /** A strong ETag over the published figures: it changes exactly when a figure does. */
  readonly etag = `"${createHash('sha256').update(JSON.stringify(PLANS)).digest('base64url').slice(0, 27)}"`;

  list(): readonly Plan[] {
    return PLANS;
  }

  find(id: string): Plan | undefined {
    return this.byId.get(id);
  }
}
