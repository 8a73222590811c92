import { describe, expect, it } from 'vitest';
import { assertCatalogHandled } from '../src/index.js';
import { testCatalog } from './fixtures/test-catalog.js';

describe('boot-time catalog check', () => {
  const all = (): Map<string, string[]> =>
    new Map([
      ['search.health.v1', ['Health.health']],
      ['search.echo.v1', ['T.echo']],
      ['search.fail.v1', ['T.fail']],
    ]);

  it('passes when every subject has exactly one handler', () => {
    expect(() => assertCatalogHandled(testCatalog, all())).not.toThrow();
  });

  it('fails naming a subject without a handler', () => {
    const registry = all();
    registry.delete('search.fail.v1');
    expect(() => assertCatalogHandled(testCatalog, registry)).toThrow(/search\.fail\.v1 has no handler/);
  });

  it('fails naming a subject with two handlers', () => {
    const registry = all();
    registry.set('search.echo.v1', ['A.echo', 'B.echo']);
    expect(() => assertCatalogHandled(testCatalog, registry)).toThrow(/search\.echo\.v1 has 2 handlers: A\.echo, B\.echo/);
  });

  it('fails naming a handled subject the catalog does not list', () => {
    const registry = all();
    registry.set('search.ghost.v1', ['G.ghost']);
    expect(() => assertCatalogHandled(testCatalog, registry)).toThrow(/search\.ghost\.v1 is handled but not in the catalog/);
  });
});
