// Type-aware lint for every package, plus the architecture's boundaries:
// an app never imports another app, and packages/contracts depends on zod alone.
import tseslint from 'typescript-eslint';

const APPS = ['gateway', 'sandbox', 'search', 'fetch', 'billing', 'agent-run'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/src/generated/**', '**/.turbo/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // V8's parser pretenures a function literal assigned to a property (`this.onX = () => …`, which
    // is also what a TypeScript class field `onX = () => …` compiles to here): until TurboFan
    // optimises the function that makes it, each one is allocated straight in the old generation.
    // Made per request, every request's closure is then an old object pointing at that request's
    // young ones, and each scavenge promotes all of them: the gateway's first ~13,000 requests cost
    // ~2x (docs/decisions/0002-gateway-hot-path.md, follow-up 10). Bind the
    // function to a const first, or make it a method; tests may do as they like.
    files: ['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          'PropertyDefinition[static!=true] > :matches(ArrowFunctionExpression, FunctionExpression).value',
          "AssignmentExpression[left.type='MemberExpression'] > :matches(ArrowFunctionExpression, FunctionExpression).right",
          "AssignmentExpression[left.type='MemberExpression'] > :matches(TSAsExpression, TSSatisfiesExpression, TSNonNullExpression).right > :matches(ArrowFunctionExpression, FunctionExpression).expression",
        ].map((selector) => ({
          selector,
          message:
            'A function literal assigned to a property is allocated in the old generation by V8 (pretenured) and keeps what it captures alive through scavenges; assign it to a const first, or use a method (docs/decisions/0002-gateway-hot-path.md).',
        })),
      ],
    },
  },
  ...APPS.map((app) => ({
    files: [`apps/${app}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: APPS.filter((a) => a !== app).flatMap((a) => [`@drael/${a}`, `@drael/${a}/*`]), message: 'Apps talk only through packages/contracts over NATS.' },
            { regex: `^(\\.\\./)+(apps/)?(${APPS.filter((a) => a !== app).join('|')})(/|$)`, message: 'Apps talk only through packages/contracts over NATS.' },
          ],
        },
      ],
    },
  })),
  {
    files: ['packages/contracts/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!zod$|\\.{1,2}/).*', message: 'packages/contracts depends on zod only.' }] }],
    },
  },
);
