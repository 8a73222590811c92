/**
 * A service's dependency checks, shared by its `<service>.health.v1` handler and its HTTP health
 * port: each names one real dependency (postgres, redis, searxng, docker, chromium) so a failing
 * health answer says which one is down instead of a bare "ok"/"not ok".
 */
export interface HealthCheck {
  /** The dependency, as an operator names it: `postgres`, `redis`, `docker`, ... */
  name: string;
  /**
   * A dependency the service cannot do its work without. A non-critical one (a cache the service
   * runs without) is reported but does not fail health.
   */
  critical?: boolean;
  /** Resolves when the dependency answers; rejects (or outlives the timeout) when it does not. */
  check(): Promise<void>;
}

/** Nest token: a service module provides its checks as `{ provide: HEALTH_CHECKS, useFactory }`. */
export const HEALTH_CHECKS = Symbol('HEALTH_CHECKS');

export interface HealthResult {
  ok: boolean;
  /** Per dependency: `ok`, or why it failed. */
  checks: Record<string, string>;
  /** Critical dependencies that failed, sorted. */
  failing: string[];
}

// A probe must answer well inside the kubelet's and the gateway's timeouts (1-5 s).
export const HEALTH_CHECK_TIMEOUT_MS = 800;

/** Runs every check in parallel, each bounded by `timeoutMs`; never throws. */
export async function runHealthChecks(checks: readonly HealthCheck[], timeoutMs = HEALTH_CHECK_TIMEOUT_MS): Promise<HealthResult> {
  const results: Record<string, string> = {};
  const failing: string[] = [];
  await Promise.all(
    checks.map(async (c) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          c.check(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        results[c.name] = 'ok';
      } catch (err) {
        results[c.name] = reason(err);
        if (c.critical !== false) failing.push(c.name);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  failing.sort();
  return { ok: failing.length === 0, checks: results, failing };
}

function reason(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  // AggregateError (a refused dual-stack connect) has an empty message and the code on the instance.
  const text = typeof e?.code === 'string' && !message.includes(e.code) ? `${e.code} ${message}` : message;
  return text.slice(0, 200);
}
