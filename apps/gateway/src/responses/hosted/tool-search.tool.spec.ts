import { describe, expect, it } from 'vitest';
import { runDatetime } from './datetime.tool.js';
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
});
