import type { Provider } from '@nestjs/common';
import { HEALTH_CHECKS, type HealthCheck } from '@drael/nats-rpc';
import { FetchRuntime } from '../fetch.runtime.js';

/**
 * fetch's dependency: Chromium, for pages that need a browser. Not critical: plain HTTP fetches
 * (most pages) still work without it, so fetch keeps serving and reports the browser as failed.
 */
export const fetchHealthChecks: Provider = {
  provide: HEALTH_CHECKS,
  inject: [FetchRuntime],
  useFactory: (runtime: FetchRuntime): HealthCheck[] => (runtime.browser ? [{ name: 'chromium', critical: false, check: () => runtime.browser!.check() }] : []),
};
