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
