import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { BillingHolds } from './billing-holds.js';
import { ServiceHealth } from './service-health.js';
import { parseArguments } from './tool-arguments.js';
import { failed, type ToolResult } from './tool-result.js';
import { postJson, ProviderError } from './providers/provider-http.client.js';
import type { FunctionToolDefinition, ServerTool, ToolContext } from './server-tool.js';

const ArgsSchema = z.object({ prompt: z.string().trim().min(1).max(4000) });

const ImagesAnswerSchema = z.object({
  data: z.array(z.object({ url: z.string().optional(), b64_json: z.string().optional(), revised_prompt: z.string().optional() })).min(1),
});

/**
 * generate_image → an OpenAI-compatible images endpoint (POST /images/generations). Served only
 * when DRAEL_IMAGE_PROVIDER is set and billing answers. Cash per attempt (spec 01): one image is
 * held, settled when the provider answered, released when the attempt never reached it.
 */
@Injectable()
export class GenerateImageTool implements ServerTool {
  readonly name = 'generate_image' as const;
  readonly minLevel = 'l1_http' as const;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly holds: BillingHolds,
    private readonly health: ServiceHealth,
  ) {}

  definition(): FunctionToolDefinition {
    return {
      type: 'function',
      function: {
        name: this.name,
        description: 'Generate one image from a prompt; returns its URL. Paid.',
        parameters: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
      },
    };
  }

  async isWired(): Promise<boolean> {
    return this.config.DRAEL_IMAGE_PROVIDER !== undefined && (await this.health.isUp('billing'));
  }

  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const provider = this.config.DRAEL_IMAGE_PROVIDER;
    if (!provider) return failed('not_configured', 'No image provider is configured. The tool did not run.');
    const parsed = parseArguments(ArgsSchema, args);
    if (!parsed.ok) return parsed.result;
    return this.holds.around(ctx, 'generate_image', 1, async (signal) => {
      try {
        const answer = await postJson(
          `${provider.base_url}/images/generations`,
          provider.api_key,
          { model: provider.model, prompt: parsed.value.prompt, n: 1, size: provider.size },
          { signal, timeoutMs: provider.timeout_ms },
        );
        const images = ImagesAnswerSchema.safeParse(answer);
        if (!images.success) return { result: failed('provider_bad_answer', 'the image provider answered without an image'), units: 1 };
        const first = images.data.data[0]!;
        return {
          result: {
            ok: true,
            ...(first.url ? { url: first.url } : { note: `the image was returned inline (${first.b64_json?.length ?? 0} base64 characters) and is not shown here` }),
            ...(first.revised_prompt ? { revised_prompt: first.revised_prompt } : {}),
          },
          units: 1,
        };
      } catch (err) {
        if (err instanceof ProviderError) return { result: failed(err.code, `${err.message}. No image was made.`), units: err.attempted ? 1 : undefined };
        throw err;
      }
    });
  }
}
