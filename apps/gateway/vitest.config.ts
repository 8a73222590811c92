import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    // Every answer of a started gateway is checked against its /openapi.json (issue 22).
    setupFiles: ['test/openapi-check.setup.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: '.reports/vitest.json' },
  },
});
