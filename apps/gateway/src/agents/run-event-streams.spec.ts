import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import { RunEventStreams } from './run-event-streams.js';

const streams = (limit: number) => new RunEventStreams({ RUN_EVENT_STREAMS_PER_ACCOUNT: limit } as GatewayConfig);

describe('RunEventStreams', () => {
  it('admits an account up to its bound, then refuses with 429 too_many_event_streams; other accounts are counted apart', () => {
    const s = streams(2);
    s.take('a');
    s.take('a');
    const refused = (() => {
      try {
        s.take('a');
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 429, code: 'too_many_event_streams', type: 'rate_limit_error' });
    expect(() => s.take('b')).not.toThrow();
  });

  it('a place given back twice (hang-up, then the stream ending) counts once', () => {
    const s = streams(2);
    const first = s.take('a');
    s.take('a');
    first();
    first();
    expect(s.heldBy('a')).toBe(1);
    s.take('a');
    expect(() => s.take('a')).toThrow(ApiError);
  });
});
