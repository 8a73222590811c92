import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
    // Generous: every test drives real containers on a shared 2-core machine; none asserts speed.
    testTimeout: 90_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    reporters: ['default', 'json'],
    outputFile: { json: '.reports/vitest.json' },
  },
});
