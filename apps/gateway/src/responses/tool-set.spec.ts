import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors/api-error.js';
import { CreateResponseSchema } from './responses.schema.js';
import { ToolSet } from './tool-set.js';

const toolsOf = (tools: unknown[]) => CreateResponseSchema.parse({ model: 'm', input: 'x', tools }).tools;
const names = (set: ToolSet) => set.visibleTools(new Map(), true).map((t) => t.function.name);

describe('ToolSet', () => {
  it('hosted tools become function tools the model sees; deferred functions stay out', () => {
    const set = ToolSet.from(
      toolsOf([
        { type: 'web_search' },
        { type: 'datetime', timezone: 'Europe/Bucharest' },
        { type: 'function', name: 'visible' },
        { type: 'function', name: 'hidden', defer_loading: true },
      ]),
    );
    expect(names(set)).toEqual(['web_search', 'datetime', 'visible']);
    expect(set.visibleTools(new Map(), false).map((t) => t.function.name)).toEqual(['visible']);
    expect(set.hostedKindOf('web_search')).toBe('web_search');
    expect(set.hostedKindOf('web_fetch')).toBeUndefined();
  });

  it('a function named like a hosted tool clashes only when that hosted tool is listed', () => {
    expect(() => ToolSet.from(toolsOf([{ type: 'tool_search' }, { type: 'function', name: 'tool_search' }]))).toThrow(ApiError);
    expect(() => ToolSet.from(toolsOf([{ type: 'web_search' }, { type: 'function', name: 'web_search', defer_loading: true }]))).toThrow(/both/);
    const own = ToolSet.from(toolsOf([{ type: 'function', name: 'tool_search' }]));
    expect(own.hostedKindOf('tool_search')).toBeUndefined();
    expect(names(own)).toEqual(['tool_search']);
  });

  it('refuses unknown engines, unknown timezones and duplicates before anything runs', () => {
    expect(() => ToolSet.from(toolsOf([{ type: 'web_fetch', engine: 'firecrawl' }]))).toThrow(/not available/);
    expect(() => ToolSet.from(toolsOf([{ type: 'datetime', timezone: 'Nowhere/City' }]))).toThrow(/timezone/);
    expect(() => ToolSet.from(toolsOf([{ type: 'web_search' }, { type: 'web_search' }]))).toThrow(/twice/);
  });

  it('web_fetch accepts only type and engine', () => {
    expect(CreateResponseSchema.safeParse({ model: 'm', tools: [{ type: 'web_fetch', filters: { allowed_domains: ['a.com'] } }] }).success).toBe(false);
  });

  it('a forced tool_choice constrains only the first turn and must name a listed tool', () => {
    const set = ToolSet.from(toolsOf([{ type: 'web_search' }]));
    const tools = set.visibleTools(new Map(), true);
    expect(set.toolChoiceFor({ type: 'web_search' }, 0, tools)).toEqual({ type: 'function', function: { name: 'web_search' } });
    expect(set.toolChoiceFor({ type: 'web_search' }, 1, tools)).toBe('auto');
    expect(set.toolChoiceFor('required', 1, tools)).toBe('auto');
    expect(set.toolChoiceFor('none', 3, tools)).toBe('none');
    expect(() => set.toolChoiceFor({ type: 'function', name: 'missing' }, 0, tools)).toThrow(/not among/);
  });

  it('a forced tool_choice needs declared tools (a hosted one, a function, a deferred function); auto and none need none', () => {
    for (const choice of ['required', { type: 'function', name: 'f' }, { type: 'datetime' }] as const) {
      expect(() => ToolSet.from([]).checkChoice(choice)).toThrow(/declares none/);
      expect(() => ToolSet.from(toolsOf([{ type: 'datetime' }])).checkChoice(choice)).not.toThrow();
      expect(() => ToolSet.from(toolsOf([{ type: 'function', name: 'g', defer_loading: true }])).checkChoice(choice)).not.toThrow();
    }
    for (const choice of ['auto', 'none', undefined] as const) expect(() => ToolSet.from([]).checkChoice(choice)).not.toThrow();
  });
});
