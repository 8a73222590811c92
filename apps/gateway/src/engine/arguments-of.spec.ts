import { describe, expect, it } from 'vitest';
import { argumentsOf } from './model-turn.engine.js';

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('argumentsOf', () => {
  it('a JSON object is the arguments; nothing written is an empty object; anything else is none', () => {
    expect(argumentsOf('{"query":"drael"}')).toEqual({ query: 'drael' });
    expect(argumentsOf('')).toEqual({});
    expect(argumentsOf('[1]')).toBeUndefined();
    expect(argumentsOf('"text"')).toBeUndefined();
    expect(argumentsOf('null')).toBeUndefined();
    expect(argumentsOf('{"query":')).toBeUndefined();
  });

  it('arguments nested deeper than any JSON Drael accepts are none (the attack: 5,000 levels overflowed every later clone and save, a 500)', () => {
    expect(argumentsOf(nested(10))).toBeDefined();
    const deep = nested(5_000);
    expect(() => structuredClone(JSON.parse(deep))).toThrow(RangeError);
    expect(argumentsOf(deep)).toBeUndefined();
    expect(argumentsOf(nested(1_000_000))).toBeUndefined();
  });
});
