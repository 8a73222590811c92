import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    // A loaded 2-core CI machine: browser assertions poll for up to a minute, not vitest's default second.
    expect: { poll: { timeout: 60_000, interval: 250 } },
    reporters: ['default', 'json'],
    outputFile: { json: '.reports/vitest.json' },
  },
});
