import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    // Every test file in one module graph: its own fresh one per file cost a second or more of
    // loading each (the contracts, NATS, Nest), 75 s over the gateway's 70 files. No test here
    // mocks a module, stubs a global or writes process.env, and each file stops what it started.
    isolate: false,
    // Every answer of a started gateway is checked against its /openapi.json (issue 22).
    setupFiles: ['test/openapi-check.setup.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: '.reports/vitest.json' },
  },
});
