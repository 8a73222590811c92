import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
    // Generous: every test drives real containers on a shared 2-core machine; none asserts speed.
    testTimeout: 90_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    // Every test file in one module graph: its own fresh one per file cost a second or more of
    // loading each (the contracts, NATS, Nest), 75 s over the gateway's 70 files. No test here
    // mocks a module, stubs a global or writes process.env, and each file stops what it started.
    isolate: false,
    reporters: ['default', 'json'],
    outputFile: { json: '.reports/vitest.json' },
  },
});
