import { envInt } from '@drael/config';

/** Key verification's part of the gateway's environment (joined into the gateway's config schema). */
export const authConfigShape = {
  // How long a verified key is trusted without asking billing again: a revoked key stops within this
  // (at once on the gateway whose admin API revoked it: KeyVerifier.forgetKey).
  AUTH_CACHE_TTL_MS: envInt(0, 60_000).default(5_000),
  // Bound on cached keys per replica (oldest dropped first).
  AUTH_CACHE_MAX_KEYS: envInt(1, 1_000_000).default(10_000),
};
