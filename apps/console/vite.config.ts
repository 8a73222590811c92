import { defineConfig } from 'vite';

// The gateway serves the build at /console/ (apps/gateway/src/console); `pnpm dev` proxies the API
// to a gateway on DRAEL_GATEWAY_URL so the dev server stays same-origin like production.
export default defineConfig({
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false, assetsInlineLimit: 0 },
  server: {
    proxy: Object.fromEntries(
      ['/v1', '/api', '/admin', '/readyz', '/healthz'].map((p) => [p, { target: process.env.DRAEL_GATEWAY_URL ?? 'http://127.0.0.1:8080', changeOrigin: false }]),
    ),
  },
});
