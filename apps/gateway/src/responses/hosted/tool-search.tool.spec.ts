import { describe, expect, it } from 'vitest';
import { formattersKept, runDatetime, validTimezone } from './datetime.tool.js';
import { runToolSearch as searchIn, searchableOf } from './tool-search.tool.js';
import { ToolSet } from '../tool-set.js';
import type { FunctionTool } from '../responses.schema.js';

const fn = (name: string, description: string): FunctionTool => ({ type: 'function', name, description, parameters: { type: 'object', properties: {} } });
const deferred = new Map([fn('get_weather', 'Current weather for a city'), fn('sendInvoice', 'Email an invoice'), fn('lookup_order', 'Find an order')].map((f) => [f.name, f]));
const runToolSearch = (query: string, tools: ReadonlyMap<string, FunctionTool>, loaded = new Map<string, FunctionTool>()) => searchIn(query, searchableOf(tools), loaded);

describe('platform tool_search', () => {
  it('loads the definitions matching the query by name and description', () => {
    const out = runToolSearch('weather in a city', deferred);
    expect(out.loaded.map((f) => f.name)).toEqual(['get_weather']);
    expect(out.itemFields?.tools).toEqual([{ type: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: {} } }]);
  });

  it('splits camelCase names', () => {
    expect(runToolSearch('invoice', deferred).loaded.map((f) => f.name)).toEqual(['sendInvoice']);
  });

  it('a function already loaded is not found again', () => {
    expect(runToolSearch('order weather invoice', deferred).loaded.map((f) => f.name)).toEqual(['get_weather', 'sendInvoice', 'lookup_order']);
    const loaded = new Map([['sendInvoice', deferred.get('sendInvoice')!]]);
    expect(runToolSearch('order weather invoice', deferred, loaded).loaded.map((f) => f.name)).toEqual(['get_weather', 'lookup_order']);
  });

  it("splits the client's descriptions once per tool set, not once a call", () => {
    // The audit's attack: 128 calls a response, each splitting every deferred description again.
    let reads = 0;
    const tools = Array.from({ length: 128 }, (_, i) => {
      const tool = { type: 'function', name: `tool_${i}_lookup_records`, defer_loading: true } as FunctionTool;
      return Object.defineProperty(tool, 'description', { enumerable: true, get: () => (reads++, 'alpha bravo records '.repeat(100)) });
    });
    const set = ToolSet.from(tools);
    // A query that matches nothing: no definition is read to be returned, only to be matched.
    for (let call = 0; call < 128; call++) expect(searchIn('spaceship', set.searchable(), new Map()).loaded).toEqual([]);
    expect(reads).toBe(128);
    expect(searchIn('records lookup', set.searchable(), new Map()).loaded).toHaveLength(5);
  });

  it("refuses a query past 1,000 characters as the model's bad arguments, matching nothing", () => {
    const out = runToolSearch('weather '.repeat(131_072), deferred);
    expect(out.loaded).toEqual([]);
    expect(out.failure).toMatchObject({ code: 'invalid_arguments' });
    expect(out.forModel).toMatchObject({ ok: false });
    expect(runToolSearch(`${'weather '.repeat(124)}city`, deferred).loaded.map((f) => f.name)).toEqual(['get_weather']);
  });

  it('nothing matching is an empty, valid answer', () => {
    const out = runToolSearch('spaceship', deferred);
    expect(out.loaded).toEqual([]);
    expect(out.failure).toBeUndefined();
    expect(out.forModel).toMatchObject({ ok: true, found: false });
  });
});

describe('datetime', () => {
  it('computes the local time of the IANA zone in-process', () => {
    const now = new Date('2026-03-10T20:30:00Z');
    expect(runDatetime('Asia/Hong_Kong', now).forModel).toMatchObject({
      date: '2026-03-11',
      time: '04:30:00',
      weekday: 'Wednesday',
      utc_offset: '+08:00',
      iso: '2026-03-11T04:30:00+08:00',
    });
    expect(runDatetime('UTC', now).forModel).toMatchObject({ date: '2026-03-10', time: '20:30:00', utc_offset: '+00:00', iso: '2026-03-10T20:30:00Z' });
  });

  it('keeps one formatter per timezone, however its name is capitalised; checking a name keeps none', () => {
    // The audit's attack: every capitalisation of one long name, each a new key of the cache.
    const base = 'america/argentina/comodrivadavia';
    const letters = [...base].flatMap((c, i) => (/[a-z]/.test(c) ? [i] : []));
    const variants = Array.from({ length: 2000 }, (_, n) => {
      const name = [...base];
      letters.forEach((at, bit) => {
        if ((n >> bit) & 1) name[at] = name[at]!.toUpperCase();
      });
      return name.join('');
    });
    expect(new Set(variants).size).toBe(2000);
    const kept = formattersKept();
    for (const tz of variants) expect(validTimezone(tz), tz).toBe(true);
    expect(formattersKept()).toBe(kept);
    const now = new Date('2026-03-10T20:30:00Z');
    const answers = new Set(variants.map((tz) => JSON.stringify(runDatetime(tz, now).forModel.iso)));
    expect([...answers]).toEqual(['"2026-03-10T17:30:00-03:00"']);
    expect(formattersKept()).toBeLessThanOrEqual(kept + 1);
    expect(validTimezone('america/nowhere')).toBe(false);
  });
});
