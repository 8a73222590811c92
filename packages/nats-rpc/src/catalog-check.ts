import type { Catalog } from '@drael/contracts';
import { catalogEntries } from '@drael/contracts';
import { handlerRegistry } from './handles.decorator.js';

/**
 * Boot-time check: every subject of the service's catalog has exactly one handler, and no handler
 * answers a subject the catalog does not list. Throws with every problem named.
 */
export function assertCatalogHandled(catalog: Catalog, registry: ReadonlyMap<string, readonly string[]> = handlerRegistry): void {
  const subjects = new Set(catalogEntries(catalog).map((e) => e.subject));
  const problems: string[] = [];
  for (const subject of subjects) {
    const handlers = registry.get(subject) ?? [];
    if (handlers.length === 0) problems.push(`${subject} has no handler`);
    if (handlers.length > 1) problems.push(`${subject} has ${handlers.length} handlers: ${handlers.join(', ')}`);
  }
  const service = catalogEntries(catalog)[0]?.service;
  for (const subject of registry.keys()) {
    if (!subjects.has(subject) && service && subject.startsWith(`${service}.`)) {
      problems.push(`${subject} is handled but not in the catalog`);
    }
  }
  if (problems.length > 0) throw new Error(`catalog check failed:\n  ${problems.join('\n  ')}`);
}
