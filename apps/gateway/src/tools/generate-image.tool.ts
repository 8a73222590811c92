import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { BillingHolds, type PaidOutcome } from './billing-holds.js';
import { ProviderTool } from './provider-tool.js';
import { ServiceHealth } from './service-health.js';
import { failed } from './tool-result.js';
import { postJson, type ProviderError } from './providers/provider-http.client.js';
import type { FunctionToolDefinition } from './server-tool.js';
import type { ImageProvider } from './tools.config.js';

const ArgsSchema = z.object({ prompt: z.string().trim().min(1).max(4000) });
type Args = z.infer<typeof ArgsSchema>;

const ImagesAnswerSchema = z.object({
  data: z.array(z.object({ url: z.string().optional(), b64_json: z.string().optional(), revised_prompt: z.string().optional() })).min(1),
});

/**
 * generate_image → an OpenAI-compatible images endpoint (POST /images/generations). Served only
 * when DRAEL_IMAGE_PROVIDER is set and billing answers. Cash per attempt (spec 01): one image is
 * held, settled when the provider answered, released when the attempt never reached it.
 */
@Injectable()
export class GenerateImageTool extends ProviderTool<ImageProvider, Args> {
  readonly name = 'generate_image' as const;
  protected readonly providerLabel = 'image';
  protected readonly notDone = 'No image was made.';
  protected readonly args = ArgsSchema;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    holds: BillingHolds,
    health: ServiceHealth,
  ) {
    super(holds, health);
  }

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

  protected provider(): ImageProvider | undefined {
    return this.config.DRAEL_IMAGE_PROVIDER;
  }

  protected holdUnits(): number {
    return 1;
  }

  // spec 01: cash at a provider per attempt: an attempt the provider answered is charged.
  protected override unitsOnFailure(err: ProviderError): number | undefined {
    return err.attempted ? 1 : undefined;
  }

  protected async call(provider: ImageProvider, args: Args, signal: AbortSignal): Promise<PaidOutcome> {
    const answer = await postJson(
      `${provider.base_url}/images/generations`,
      provider.api_key,
      { model: provider.model, prompt: args.prompt, n: 1, size: provider.size },
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
  }
}
