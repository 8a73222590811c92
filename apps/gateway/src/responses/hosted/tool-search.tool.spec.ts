import { describe, expect, it } from 'vitest';
import { formattersKept, runDatetime, validTimezone } from './datetime.tool.js';
import { runToolSearch } from './tool-search.tool.js';
import type { FunctionTool } from '../responses.schema.js';

const fn = (name: string, description: string): FunctionTool => ({ type: 'function', name, description, parameters: { type: 'object', properties: {} } });
const deferred = new Map([fn('get_weather', 'Current weather for a city'), fn('sendInvoice', 'Email an invoice'), fn('lookup_order', 'Find an order')].map((f) => [f.name, f]));

describe('platform tool_search', () => {
  it('loads the definitions matching the query by name and description', () => {
    const out = runToolSearch('weather in a city', deferred);
    expect(out.loaded.map((f) => f.name)).toEqual(['get_weather']);
    expect(out.itemFields?.tools).toEqual([{ type: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: {} } }]);
  });

  it('splits camelCase names', () => {
    expect(runToolSearch('invoice', deferred).loaded.map((f) => f.name)).toEqual(['sendInvoice']);
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
