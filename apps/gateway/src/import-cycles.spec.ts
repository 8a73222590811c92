import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The gateway's source files import each other without a cycle (issue 16): a cycle means two
// files that can only be understood together. Type-only imports count too (as `madge --circular`
// counts them): they are still a dependency a reader has to follow, and so are a side-effect
// import (`import './x.js'`) and a dynamic one (`await import('./x.js')`).
const SRC = dirname(fileURLToPath(import.meta.url));
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s+['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

function importGraph(dir = SRC): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(dir)) {
    const text = readFileSync(file, 'utf8');
    const deps = [...text.matchAll(IMPORT)].map((m) => resolve(dirname(file), (m[1] ?? m[2] ?? m[3])!.replace(/\.js$/, '.ts')));
    graph.set(file, deps);
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the files along it. */
function cyclesOf(graph: Map<string, string[]>, root = SRC): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const dep of graph.get(file) ?? []) {
      if (!graph.has(dep)) continue;
      if (state.get(dep) === 'open') cycles.push([...stack.slice(stack.indexOf(dep)), dep].map((f) => relative(root, f)));
      else if (!state.has(dep)) visit(dep);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

describe('the gateway source', () => {
  it('has no import cycle', () => {
    expect(cyclesOf(importGraph())).toEqual([]);
  });

  it('the graph holds every source file of src/, nested folders included, with its edges', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(join(SRC, 'responses', 'hosted', 'web-fetch.tool.ts'))).toContain(join(SRC, 'tools', 'tool-result.ts'));
    // main.ts's side-effect import of the V8 flags, and its ordinary imports.
    expect(graph.get(join(SRC, 'main.ts'))).toEqual(expect.arrayContaining([join(SRC, 'v8-flags.ts'), join(SRC, 'bootstrap.ts')]));
  });

  it('fails on a cycle on disk, through any import form, in a nested folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'import-cycles-'));
    try {
      mkdirSync(join(dir, 'a'));
      mkdirSync(join(dir, 'b'));
      writeFileSync(join(dir, 'a', 'one.ts'), "import type { Two } from '../b/two.js';\nexport type One = Two;\n");
      writeFileSync(join(dir, 'b', 'two.ts'), "export type Two = string;\nexport const three = () => import('./three.js');\n");
      writeFileSync(join(dir, 'b', 'three.ts'), "import '../a/one.js';\n");
      writeFileSync(join(dir, 'b', 'free.ts'), "export {\n  three,\n} from './two.js';\n");
      const cycles = cyclesOf(importGraph(dir), dir);
      // One cycle, whichever of its files the walk entered it by (readdir's order is the file system's).
      expect(cycles).toHaveLength(1);
      expect(new Set(cycles[0])).toEqual(new Set(['a/one.ts', 'b/two.ts', 'b/three.ts']));
      // Without the cycle's last edge there is none.
      writeFileSync(join(dir, 'b', 'three.ts'), 'export {};\n');
      expect(cyclesOf(importGraph(dir), dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
