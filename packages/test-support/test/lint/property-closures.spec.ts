import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

// eslint.config.js refuses a function literal assigned to a property in the services' code: V8
// pretenures it, and made per request it kept every request's objects alive through scavenges
// (docs/decisions/0002-gateway-hot-path.md, follow-up 10). CI runs no lint, so this runs that one
// rule, as the config defines it, over the tree; and shows on samples that it catches each form.

const root = resolve(import.meta.dirname, '../../../..');
const SERVICE_FILE = resolve(root, 'apps/gateway/src/sample.ts');

async function propertyClosureRule(): Promise<Linter.Config> {
  const configs = (await import(pathToFileURL(resolve(root, 'eslint.config.js')).href)).default as Linter.Config[];
  const block = configs.find((c) => c.rules?.['no-restricted-syntax'] !== undefined && c.files?.includes('apps/*/src/**/*.ts'));
  if (!block) throw new Error('eslint.config.js has no no-restricted-syntax block for apps/*/src');
  return block;
}

async function linter(): Promise<ESLint> {
  return new ESLint({
    cwd: root,
    overrideConfigFile: true,
    // Syntax only (no type information): the rule is a set of AST selectors.
    overrideConfig: [
      { ignores: ['**/dist/**', '**/node_modules/**', '**/src/generated/**'] },
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
      await propertyClosureRule(),
    ],
  });
}

async function errorsIn(code: string, filePath = SERVICE_FILE): Promise<number[]> {
  const [result] = await (await linter()).lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.line);
}

describe('no function literal assigned to a property (V8 pretenures it)', () => {
  it('catches a class field, a this-property, a member of another object, a logical assignment and a cast', async () => {
    const code = [
      'class Sink {',
      '  private readonly onAbort = () => this.stop();',
      '  handler = function () {};',
      '  static once = () => 1;',
      '  stop(): void {}',
      '  constructor(o: { cb?: () => void; list: Array<() => void> }) {',
      '    this.stop = () => undefined;',
      '    o.cb = async () => {};',
      '    o.cb ??= () => {};',
      '    o.list[0] = () => {};',
      '    o.cb = (() => {}) as () => void;',
      '  }',
      '}',
    ].join('\n');
    expect(await errorsIn(code)).toEqual([2, 3, 7, 8, 9, 10, 11]);
  });

  it('lets the fix through: the function bound to a const first, a method, a bound method, a static field', async () => {
    const code = [
      'class Sink {',
      '  private readonly onAbort: () => void;',
      '  private readonly bound = this.stop.bind(this);',
      '  static once = () => 1;',
      '  constructor(signal: AbortSignal) {',
      '    const onAbort = () => this.stop();',
      '    this.onAbort = onAbort;',
      '    signal.addEventListener("abort", () => this.stop());',
      '  }',
      '  stop(): void {}',
      '}',
    ].join('\n');
    expect(await errorsIn(code)).toEqual([]);
  });

  it('leaves tests alone', async () => {
    expect(await errorsIn('const o: { f?: () => void } = {};\no.f = () => {};', resolve(root, 'apps/gateway/src/sample.spec.ts'))).toEqual([]);
  });

  it('holds for every service and package source file', async () => {
    const results = await (await linter()).lintFiles(['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts']);
    const found = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === 'no-restricted-syntax' || m.fatal).map((m) => `${r.filePath.slice(root.length + 1)}:${m.line} ${m.message.slice(0, 80)}`),
    );
    expect(results.length).toBeGreaterThan(300);
    expect(found).toEqual([]);
  });
});
