import { z } from 'zod';
import { envJson } from '@drael/config';

const httpUrl = z.url({ protocol: /^https?$/ });

/** An OpenAI-compatible images endpoint (POST {base_url}/images/generations). */
export const ImageProviderSchema = z.object({
  base_url: httpUrl.transform((u) => u.replace(/\/+$/, '')),
  api_key: z.string().default(''),
  model: z.string().min(1),
  size: z.string().default('1024x1024'),
  timeout_ms: z.number().int().positive().default(60_000),
});
export type ImageProvider = z.infer<typeof ImageProviderSchema>;

/**
 * A lookup provider over HTTP: POST {url} with JSON {query, limit}; Bearer api_key when set.
 * Breach providers answer {results: [...]}; contact providers answer {contacts: [{..., premium}]}.
 */
export const LookupProviderSchema = z.object({
  url: httpUrl,
  api_key: z.string().default(''),
  timeout_ms: z.number().int().positive().default(20_000),
});
export type LookupProvider = z.infer<typeof LookupProviderSchema>;

/** The turn loop's and the tools' settings, merged into the gateway's one config schema. */
export const toolsEnvShape = {
  // Unset: the tool has no provider wired and is not served (spec 01).
  DRAEL_IMAGE_PROVIDER: envJson(ImageProviderSchema).optional(),
  DRAEL_BREACH_PROVIDER: envJson(LookupProviderSchema).optional(),
  DRAEL_CONTACT_PROVIDER: envJson(LookupProviderSchema).optional(),
  // spec 04: the request's cost ceiling, default 5 USD (model prices per alias: input_per_1m/output_per_1m).
  DRAEL_REQUEST_COST_CEILING_USD: z.coerce.number().nonnegative().default(5),
  // The most tool calls one chat request runs, its sub-agents' included (turn-loop/cost-meter.ts).
  DRAEL_REQUEST_TOOL_CALLS: z.coerce.number().int().min(1).max(10_000).default(128),
  // How long a service's health answer decides whether its tool is served.
  DRAEL_TOOL_HEALTH_TTL_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  DRAEL_TOOL_HEALTH_TIMEOUT_MS: z.coerce.number().int().min(50).max(10_000).default(500),
  // How long a paid tool's credit hold lives if the gateway dies before settling or releasing it
  // (billing's sweeper expires it then, uncharged). It must outlast the slowest provider call
  // (timeout_ms, 60 s for images); 300 s by default, shorter in the chaos harness (bench/chaos) so its
  // "no hold left open" check runs minutes sooner.
  DRAEL_TOOL_HOLD_TTL_S: z.coerce.number().int().min(10).max(3600).default(300),
} as const;
