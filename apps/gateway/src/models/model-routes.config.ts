import { z } from 'zod';
import { envInt, envJson } from '@drael/config';

const ALIAS = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
// A deployment's name leaves in the x-drael-upstream header and in /readyz: plain characters only.
const DEPLOYMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

const prices = {
  // Prices in USD per 1M tokens: the turn loop's cost meter charges the deployment that served.
  input_per_1m: z.number().nonnegative().optional(),
  output_per_1m: z.number().nonnegative().optional(),
};

/**
 * The name under which a deployment takes the output token limit. OpenAI deprecated `max_tokens`
 * for `max_completion_tokens`, and its reasoning models refuse `max_tokens`; Ollama reads only
 * `max_tokens`. Unset, a body keeps the name it has (Drael's own limits go as `max_tokens`); set,
 * every body Drael builds for the deployment carries the limit under this one name.
 */
export const MAX_TOKENS_PARAMS = ['max_tokens', 'max_completion_tokens'] as const;
export type MaxTokensParam = (typeof MAX_TOKENS_PARAMS)[number];
const maxTokensParam = { max_tokens_param: z.enum(MAX_TOKENS_PARAMS).optional() };

// Defaults: UPSTREAM_HEADERS_TIMEOUT_MS / UPSTREAM_BODY_TIMEOUT_MS. In both forms of an alias.
const timeouts = {
  headers_timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
  body_timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
};

/** One OpenAI-compatible upstream serving an alias. */
const DeploymentSchema = z.strictObject({
  name: z.string().regex(DEPLOYMENT_NAME, 'name: letters, digits and ._:- only, at most 64').optional(),
  base_url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, '')),
  api_key: z.string().default(''),
  model: z.string().min(1),
  // Share of the alias's traffic within its priority group.
  weight: z.number().positive().max(1_000_000).default(1),
  // Group 0 is tried first; a higher group only when every deployment of the lower ones is out.
  priority: z.number().int().min(0).max(100).default(0),
  // Per gateway replica, over a sliding minute; a deployment at its limit is skipped, not hit.
  rpm: z.number().int().positive().optional(),
  tpm: z.number().int().positive().optional(),
  ...timeouts,
  ...maxTokensParam,
  ...prices,
});

/** The single-upstream form every existing configuration uses: one deployment named after the alias. */
const SingleUpstreamSchema = z.object({
  base_url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, '')),
  api_key: z.string().default(''),
  model: z.string().min(1),
  ...timeouts,
  ...maxTokensParam,
  ...prices,
});

const RoutedAliasSchema = z.strictObject({
  deployments: z.array(DeploymentSchema).min(1).max(64),
  strategy: z.enum(['weighted', 'least_busy']).default('weighted'),
  // Another alias tried once when a deployment answers context_length_exceeded.
  context_fallback: z.string().regex(ALIAS).optional(),
  // Attempts per request over all deployments (first try included); default ROUTER_MAX_ATTEMPTS.
  max_attempts: z.number().int().min(1).max(10).optional(),
  ...prices,
});

export type RoutingStrategy = 'weighted' | 'least_busy';

/** A deployment after defaults: everything the router and the upstream client need. */
export interface DeploymentConfig {
  readonly name: string;
  readonly alias: string;
  readonly base_url: string;
  readonly api_key: string;
  readonly model: string;
  readonly weight: number;
  readonly priority: number;
  readonly rpm?: number;
  readonly tpm?: number;
  readonly headers_timeout_ms?: number;
  readonly body_timeout_ms?: number;
  readonly max_tokens_param?: MaxTokensParam;
  readonly input_per_1m: number;
  readonly output_per_1m: number;
}

export interface ModelAliasConfig {
  readonly alias: string;
  readonly deployments: readonly DeploymentConfig[];
  readonly strategy: RoutingStrategy;
  readonly context_fallback?: string;
  readonly max_attempts?: number;
}

/**
 * DRAEL_MODELS: alias → one upstream (`{base_url, api_key, model, input_per_1m, output_per_1m}`,
 * unchanged) or a list of deployments (`{deployments: [...], strategy, context_fallback, ...}`).
 * Both come out as a list of deployments; a single upstream is one deployment named after its alias.
 */
export const modelsEnvSchema = envJson(z.record(z.string().regex(ALIAS, 'alias: letters, digits and ._:/- only'), z.union([RoutedAliasSchema, SingleUpstreamSchema]))).transform(
  (aliases, ctx): Record<string, ModelAliasConfig> => {
    const out: Record<string, ModelAliasConfig> = {};
    const names = new Set<string>();
    for (const [alias, entry] of Object.entries(aliases)) {
      const list = 'deployments' in entry ? entry.deployments : [{ ...entry, name: undefined, weight: 1, priority: 0 }];
      const deployments = list.map((d, i): DeploymentConfig => {
        const name = d.name ?? (list.length === 1 && DEPLOYMENT_NAME.test(alias) ? alias : `${alias.replace(/[^A-Za-z0-9._:-]/g, '-').slice(0, 56)}-${i}`);
        if (names.has(name)) ctx.addIssue({ code: 'custom', message: `deployment name ${JSON.stringify(name)} is used twice`, path: [alias] });
        names.add(name);
        const { name: _n, input_per_1m, output_per_1m, ...rest } = d as typeof d & { name?: string };
        return {
          ...rest,
          name,
          alias,
          input_per_1m: input_per_1m ?? entry.input_per_1m ?? 0,
          output_per_1m: output_per_1m ?? entry.output_per_1m ?? 0,
        };
      });
      const routed = 'deployments' in entry ? entry : undefined;
      out[alias] = {
        alias,
        deployments,
        strategy: routed?.strategy ?? 'weighted',
        ...(routed?.context_fallback ? { context_fallback: routed.context_fallback } : {}),
        ...(routed?.max_attempts ? { max_attempts: routed.max_attempts } : {}),
      };
    }
    for (const [alias, cfg] of Object.entries(out)) {
      if (cfg.context_fallback !== undefined && !out[cfg.context_fallback]) {
        ctx.addIssue({ code: 'custom', message: `context_fallback ${JSON.stringify(cfg.context_fallback)} is not a configured alias`, path: [alias] });
      }
    }
    return out;
  },
);

/** The router's part of the gateway's environment (README "Model routing"). */
export const routerConfigShape = {
  // Attempts per request over all deployments of an alias, the first included.
  ROUTER_MAX_ATTEMPTS: envInt(1, 10).default(3),
  // No retry or fallback attempt starts later than this after the first; a retry's headers
  // timeout is cut to what is left of it.
  ROUTER_DEADLINE_MS: envInt(100, 3_600_000).default(60_000),
  // Failures (connect, timeout, 5xx) in a row, within ROUTER_FAILURE_WINDOW_MS, that cool a deployment.
  ROUTER_FAILURES_TO_COOL: envInt(1, 1000).default(3),
  ROUTER_FAILURE_WINDOW_MS: envInt(1000, 3_600_000).default(60_000),
  // How long a cooled deployment is out (a 429's Retry-After overrides it, capped at ROUTER_MAX_COOLDOWN_MS).
  ROUTER_COOLDOWN_MS: envInt(100, 3_600_000).default(30_000),
  ROUTER_MAX_COOLDOWN_MS: envInt(100, 86_400_000).default(300_000),
  // Cooldowns live in Redis (REDIS_URL); replicas hear of changes at once (pub/sub) and re-read
  // them this often in case a message was missed.
  ROUTER_SYNC_MS: envInt(100, 600_000).default(2_000),
  // Redis key prefix of the shared cooldowns; default `drael:router:<DRAEL_NATS_PREFIX>:`, so the
  // replicas of one installation (one NATS prefix) share them and no other installation does.
  ROUTER_KEY_PREFIX: z.string().min(1).optional(),
};
