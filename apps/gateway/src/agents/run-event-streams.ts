import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';

/**
 * The run event streams each account holds open on this replica, bounded by
 * RUN_EVENT_STREAMS_PER_ACCOUNT (attack report F5: one key held 150 open, each a long poll on
 * agent-run re-reading Postgres every 200 ms). In memory, per replica: a stream lives on the
 * replica that serves it, and the count dies with it (a shared count would leak its places when a
 * replica dies mid-stream). N replicas admit up to N times the bound.
 */
@Injectable()
export class RunEventStreams {
  private readonly open = new Map<string, number>();

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  /**
   * Takes one of the account's places, or refuses with 429 too_many_event_streams. The answer gives
   * the place back; calling it again does nothing, so the stream's end and its client's hang-up
   * may both call it.
   */
  take(accountId: string): () => void {
    const limit = this.config.RUN_EVENT_STREAMS_PER_ACCOUNT;
    const held = this.open.get(accountId) ?? 0;
    if (held >= limit) {
      throw new ApiError(
        'too_many_event_streams',
        `This account has ${limit} run event streams open on this server, the most it may; close one (or read a finished run with GET /v1/runs/{id}) and retry.`,
      );
    }
    this.open.set(accountId, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.open.get(accountId) ?? 1) - 1;
      if (left > 0) this.open.set(accountId, left);
      else this.open.delete(accountId);
    };
  }

  /** Streams the account holds open here (tests, metrics). */
  heldBy(accountId: string): number {
    return this.open.get(accountId) ?? 0;
  }
}
