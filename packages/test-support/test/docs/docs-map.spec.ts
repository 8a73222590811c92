import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The map a newcomer reads first must match the tree: every app's README names each folder of
// its src/ (one line each), every package has a README, and the links of docs/ lead somewhere.

const root = resolve(import.meta.dirname, '../../../..');
const dirsOf = (dir: string) => readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());

/** A README maps a folder when a row of one of its tables starts with `name/…` or `src/name/…`. */
const mapped = (readme: string, folder: string) => new RegExp(`^\\|\\s*\x60(?:src/)?${folder}/`, 'm').test(readme);

/** The folders of an app's src/ its README does not map. */
function unmapped(app: string): string[] {
  const readme = readFileSync(join(root, 'apps', app, 'README.md'), 'utf8');
  return dirsOf(join(root, 'apps', app, 'src'))
    .filter((folder) => folder !== 'generated') // written by `prisma generate`, not in git
    .filter((folder) => !mapped(readme, folder));
}

describe('the map of the code', () => {
  for (const app of dirsOf(join(root, 'apps'))) {
    it(`apps/${app}/README.md maps every folder of its src/`, () => {
      expect(unmapped(app)).toEqual([]);
    });
  }

  it('every package has a README', () => {
    const missing = dirsOf(join(root, 'packages')).filter((p) => !existsSync(join(root, 'packages', p, 'README.md')));
    expect(missing).toEqual([]);
  });

  it('every relative link in docs/ and the READMEs points at a file that exists', () => {
    const pages = [
      ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(root, 'docs', f)),
      join(root, 'README.md'),
      ...['apps', 'packages'].flatMap((d) => dirsOf(join(root, d)).map((p) => join(root, d, p, 'README.md'))).filter((f) => existsSync(f)),
    ];
    const broken: string[] = [];
    for (const page of pages) {
      // Code (fenced blocks, inline spans) shows link syntax without being a link.
      const prose = readFileSync(page, 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '');
      for (const m of prose.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue; // http:, https:, mailto:
        if (!existsSync(resolve(dirname(page), target))) broken.push(`${page.slice(root.length + 1)} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the check does catch an unmapped folder', () => {
    const readme = '| `config/` | env |\nFeature modules: `health/`.';
    expect(mapped(readme, 'config')).toBe(true);
    expect(mapped(readme, 'health')).toBe(false); // named in prose, not mapped in a row
  });
});
