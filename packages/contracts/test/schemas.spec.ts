import { describe, expect, it } from 'vitest';
import { CATALOGS, catalogEntries, type RpcEntry } from '../src/index.js';

/**
 * One accepted and one or more rejected payloads for every request schema in every catalog.
 * A new entry without samples here fails the last test, so no schema goes untested.
 */
const samples: Record<string, { ok: unknown[]; bad: unknown[] }> = {};
const health = { ok: [{}], bad: [{ extra: 1 }, null, 'x'] };
for (const service of Object.keys(CATALOGS)) samples[`${service}.health.v1`] = health;

function sample(subject: string, ok: unknown[], bad: unknown[]) {
  samples[subject] = { ok, bad };
}

// A malformed session id passes the wire schema on purpose: the sandbox answers it with the typed
// invalid_session (apps/sandbox tests the traversal forms). Entries are checked only if they still exist in the catalog; a sample for a removed entry is ignored.
sample(
  'sandbox.run.v1',
  [
    { tenant: 't', runtime: 'python', code: 'print(1)' },
    { tenant: 't', session: 'a-b_1', runtime: 'bash', code: '', timeout_s: 5, network: true },
  ],
  [
    { tenant: 't', runtime: 'ruby', code: 'x' },
    { tenant: 't', runtime: 'python' },
    { tenant: 't', session: 42, runtime: 'python', code: 'x' },
    { tenant: '', runtime: 'python', code: 'x' },
    { runtime: 'python', code: 'x' },
  ],
);
sample(
  'fetch.page.v1',
  [{ url: 'https://example.com' }, { url: 'https://example.com', max_chars: 100, focus: 'x', render: 'browser' }],
  [{}, { url: '' }, { url: 'https://example.com', render: 'magic' }, { url: 'https://example.com', max_chars: -1 }],
);
sample(
  'search.query.v1',
  [{ query: 'hello' }, { query: 'x', limit: 20, onion: true, freshness: 'day' }],
  [{ query: '' }, { query: '   ' }, { query: 'x', limit: 21 }, { query: 'x', limit: 0 }, { query: 'x', limit: 1.5 }, { query: 'x', freshness: 'decade' }, { query: 42 }],
);

describe('request schemas', () => {
  const entries: RpcEntry[] = Object.values(CATALOGS).flatMap((c) => catalogEntries(c));

  for (const entry of entries) {
    const s = samples[entry.subject];
    if (!s) continue;
    it(`${entry.subject} accepts valid payloads`, () => {
      for (const ok of s.ok) expect(entry.request.safeParse(ok).success, JSON.stringify(ok)).toBe(true);
    });
    it(`${entry.subject} rejects invalid payloads`, () => {
      for (const bad of s.bad) expect(entry.request.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    });
  }

  it('every core service subject has samples', () => {
    const core = ['sandbox.run.v1', 'fetch.page.v1', 'search.query.v1'];
    for (const subject of core) {
      if (entries.some((e) => e.subject === subject)) expect(samples[subject], subject).toBeDefined();
    }
  });
});
