import { describe, expect, it } from 'vitest';
import type { SearchQueryReply } from '@drael/contracts';
import { SearchAnswerMemo } from './search-answer.memo.js';

const answer = (over: Partial<Extract<SearchQueryReply, { ok: true }>> = {}): SearchQueryReply => ({
  ok: true,
  found: true,
  results: [{ title: 't', url: 'https://e.test/', snippet: 's', source: 'web', engines: ['web'], page_age: null, verified: false }],
  degraded: [],
  coverage: 1,
  sources_tried: ['web'],
  intent: 'general',
  took_ms: 20,
  cached: false,
  cache_ttl_ms: 600_000,
  ...over,
});

function memoAt(start = 1_000, maxEntries?: number) {
  const clock = { now: start };
  return { clock, memo: new SearchAnswerMemo(maxEntries, () => clock.now) };
}

const key = { query: 'drael', limit: 10 };

describe('SearchAnswerMemo', () => {
  it('keeps an answer for cache_ttl_ms counted from when it was asked, and not a moment longer', () => {
    const { clock, memo } = memoAt(1_000);
    memo.remember(key, answer({ cache_ttl_ms: 5_000 }), 900);
    clock.now = 5_899;
    expect(memo.get(key)).toMatchObject({ ok: true, found: true });
    clock.now = 5_900;
    expect(memo.get(key)).toBeUndefined();
    expect(memo.size).toBe(0);
  });

  it('keeps nothing the service did not cache: no cache_ttl_ms, or a failure', () => {
    const { memo } = memoAt();
    memo.remember(key, answer({ cache_ttl_ms: undefined }), 1_000);
    memo.remember({ ...key, query: 'b' }, { ok: false, code: 'all_engines_failed', reason: 'x', degraded: ['web'], sources_tried: ['web'], took_ms: 3 }, 1_000);
    expect(memo.get(key)).toBeUndefined();
    expect(memo.get({ ...key, query: 'b' })).toBeUndefined();
    expect(memo.size).toBe(0);
  });

  it('does not keep an answer whose cache lifetime ran out on the way', () => {
    const { memo } = memoAt(2_000);
    memo.remember(key, answer({ cache_ttl_ms: 500 }), 1_000);
    expect(memo.get(key)).toBeUndefined();
  });

  it('every parameter of the request is part of the key, and the query is taken exactly as sent', () => {
    const { memo } = memoAt();
    memo.remember(key, answer(), 1_000);
    expect(memo.get(key)).toBeDefined();
    expect(memo.get({ ...key, limit: 3 })).toBeUndefined();
    expect(memo.get({ ...key, freshness: 'day' })).toBeUndefined();
    expect(memo.get({ ...key, onion: true })).toBeUndefined();
    // "Drael" may well be the same search to the service; deciding that is the service's rule
    expect(memo.get({ ...key, query: 'Drael' })).toBeUndefined();
    // onion left out is onion false, as the service reads it
    expect(memo.get({ ...key, onion: false })).toBeDefined();
  });

  it('is bounded: past its size the oldest entry goes', () => {
    const { memo } = memoAt(1_000, 2);
    memo.remember({ ...key, query: 'a' }, answer(), 1_000);
    memo.remember({ ...key, query: 'b' }, answer(), 1_000);
    memo.remember({ ...key, query: 'c' }, answer(), 1_000);
    expect(memo.size).toBe(2);
    expect(memo.get({ ...key, query: 'a' })).toBeUndefined();
    expect(memo.get({ ...key, query: 'b' })).toBeDefined();
    expect(memo.get({ ...key, query: 'c' })).toBeDefined();
  });
});
