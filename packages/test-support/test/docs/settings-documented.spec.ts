import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// An operator learns what an app can be told from its .env.example (one commented line per
// setting), its README and docs/. A setting the app's config schema reads but none of them names
// is one nobody can find without reading the code: this test fails on it, and on a line of
// .env.example the app no longer reads (an operator would set it and see nothing change).

const root = resolve(import.meta.dirname, '../../../..');
const APPS = ['gateway', 'search', 'fetch', 'sandbox', 'billing', 'agent-run'] as const;

/** The pages every app's settings may be explained in, besides its own README and .env.example. */
function sharedPages(): string {
  const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f));
  return [join(root, 'README.md'), join(root, 'k8s', 'README.md'), ...docs].map((f) => readFileSync(f, 'utf8')).join('\n');
}

interface ZodLike {
  shape?: Record<string, unknown>;
  _zod?: { def: { in?: ZodLike; innerType?: ZodLike; schema?: ZodLike } };
}

/** The variable names a config schema reads: its object's keys, under any transform or pipe. */
function settingNames(schema: ZodLike): string[] {
  let s: ZodLike | undefined = schema;
  for (let depth = 0; s && !s.shape && depth < 10; depth++) {
    const def: NonNullable<ZodLike['_zod']>['def'] | undefined = s._zod?.def;
    s = def?.in ?? def?.innerType ?? def?.schema;
  }
  if (!s?.shape) throw new Error('not a zod object schema (or one wrapped in transforms)');
  return Object.keys(s.shape);
}

/** The names `text` never mentions as a whole word. */
function unnamed(names: readonly string[], text: string): string[] {
  return names.filter((name) => !new RegExp(`(?<![A-Z0-9_])${name}(?![A-Z0-9_])`).test(text));
}

/** The variables an .env.example sets, commented out or not (`NAME=` at a line's start). */
function exampleNames(example: string): string[] {
  return [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
}

async function schemaOf(app: string): Promise<ZodLike> {
  const built = join(root, 'apps', app, 'dist', 'config', 'config.schema.js');
  if (!existsSync(built)) throw new Error(`${built} is missing: build first (pnpm build)`);
  return ((await import(pathToFileURL(built).href)) as { configSchema: ZodLike }).configSchema;
}

describe('every setting is documented', () => {
  const shared = sharedPages();
  for (const app of APPS) {
    it(`apps/${app}: each variable its config reads is named in its .env.example, its README or the docs`, async () => {
      const example = readFileSync(join(root, 'apps', app, '.env.example'), 'utf8');
      const readme = readFileSync(join(root, 'apps', app, 'README.md'), 'utf8');
      expect(unnamed(settingNames(await schemaOf(app)), `${example}\n${readme}\n${shared}`)).toEqual([]);
    });

    it(`apps/${app}: its .env.example sets no variable the app does not read`, async () => {
      const read = new Set(settingNames(await schemaOf(app)));
      const example = readFileSync(join(root, 'apps', app, '.env.example'), 'utf8');
      expect(exampleNames(example).filter((name) => !read.has(name))).toEqual([]);
    });
  }

  it('the checks do catch an unnamed setting and a stale example line', () => {
    expect(unnamed(['QUEUE_PREFIX', 'LEASE_MS'], 'AGENT_RUN_QUEUE_PREFIX=drael\nLEASE_MS: how long')).toEqual(['QUEUE_PREFIX']);
    expect(exampleNames('# comment\nPORT=8080\n# HOST=0.0.0.0\nnot=this')).toEqual(['PORT', 'HOST']);
  });
});
