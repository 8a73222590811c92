import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BACKEND_SERVICES, CATALOGS, catalogEntries, defineEntry, healthEntry, replyEnvelope, SERVICE_NAMES, type RpcEntry } from '../src/index.js';

const allEntries: RpcEntry[] = Object.values(CATALOGS).flatMap((c) => catalogEntries(c));

describe('catalogs', () => {
  it('every subject is unique across all services', () => {
    const subjects = allEntries.map((e) => e.subject);
    const duplicates = subjects.filter((s, i) => subjects.indexOf(s) !== i);
    expect(duplicates).toEqual([]);
  });

  it('every subject is versioned and starts with the service that answers it', () => {
    for (const entry of allEntries) {
      expect(entry.subject).toMatch(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9_-]*)+\.v\d+$/);
      expect(entry.subject.startsWith(`${entry.service}.`)).toBe(true);
      expect(entry.timeoutMs).toBeGreaterThan(0);
    }
  });

  it('every backend service answers a health subject', () => {
    for (const service of BACKEND_SERVICES) {
      const subjects = catalogEntries(CATALOGS[service]).map((e) => e.subject);
      expect(subjects).toContain(`${service}.health.v1`);
    }
  });

  it('every catalog is keyed by a known service', () => {
    expect(Object.keys(CATALOGS).sort()).toEqual([...SERVICE_NAMES].sort());
  });

  it('every entry can answer the common error codes', () => {
    for (const entry of allEntries) {
      expect(entry.errors).toEqual(expect.arrayContaining(['bad_request', 'internal', 'unavailable', 'timeout']));
    }
  });

  it('defineEntry refuses an unversioned subject and a subject of another service', () => {
    const base = { request: z.object({}), reply: z.object({}), errors: [], timeoutMs: 1 } as const;
    expect(() => defineEntry({ ...base, subject: 'sandbox.run', service: 'sandbox' })).toThrow(/v<N>/);
    expect(() => defineEntry({ ...base, subject: 'fetch.page.v1', service: 'sandbox' })).toThrow(/service name/);
  });
});

describe('reply envelope', () => {
  const envelope = replyEnvelope(healthEntry('search').reply);

  it('accepts a result or a typed error', () => {
    expect(envelope.safeParse({ result: { service: 'search', status: 'ok', uptime_s: 1, version: '1' } }).success).toBe(true);
    expect(envelope.safeParse({ error: { code: 'timeout', message: 'slow', retryable: true } }).success).toBe(true);
  });

  it('rejects both at once, neither, and an error without its fields', () => {
    expect(envelope.safeParse({}).success).toBe(false);
    expect(
      envelope.safeParse({
        result: { service: 'search', status: 'ok', uptime_s: 1, version: '1' },
        error: { code: 'x', message: 'y', retryable: false },
      }).success,
    ).toBe(false);
    expect(envelope.safeParse({ error: { code: 'timeout' } }).success).toBe(false);
    expect(envelope.safeParse({ result: { service: 'search', status: 'down', uptime_s: 1, version: '1' } }).success).toBe(false);
  });
});
