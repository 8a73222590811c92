import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SessionFilesService } from '../sessions/session-files.service.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { BillingHolds, type PaidOutcome } from './billing-holds.js';
import { ProviderTool } from './provider-tool.js';
import { ServiceHealth } from './service-health.js';
import { failed, failureOf, type ToolResult } from './tool-result.js';
import { postJson, type ProviderError } from './providers/provider-http.client.js';
import type { FunctionToolDefinition, ToolContext } from './server-tool.js';
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
 *
 * An image the provider returns inline (b64_json) is kept as a file in the request's workspace
 * and the model gets its path, never the base64: megabytes that the 8 KiB cut of every result
 * field would only destroy, replayed on every later turn (spec 01 "What a tool answers with"),
 * while files live under the session (spec 01), where run_code can open it and, with
 * X-Drael-Session, the client can download it (GET /v1/sessions/{id}/files/{path}).
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
    private readonly files: SessionFilesService,
  ) {
    super(holds, health);
  }

  definition(): FunctionToolDefinition {
    return {
      type: 'function',
      function: {
        name: this.name,
        description: 'Generate one image from a prompt; returns its URL or its workspace file. Paid.',
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

  protected async call(provider: ImageProvider, args: Args, ctx: ToolContext): Promise<PaidOutcome> {
    const answer = await postJson(
      `${provider.base_url}/images/generations`,
      provider.api_key,
      { model: provider.model, prompt: args.prompt, n: 1, size: provider.size },
      { timeoutMs: provider.timeout_ms },
    );
    const images = ImagesAnswerSchema.safeParse(answer);
    if (!images.success) return { result: failed('provider_bad_answer', 'the image provider answered without an image'), units: 1 };
    const first = images.data.data[0]!;
    const revised = first.revised_prompt ? { revised_prompt: first.revised_prompt } : {};
    if (first.url) return { result: { ok: true, url: first.url, ...revised }, units: 1 };
    const content = first.b64_json ? Buffer.from(first.b64_json, 'base64') : Buffer.alloc(0);
    if (content.length === 0) return { result: failed('provider_bad_answer', 'the image provider answered without an image'), units: 1 };
    // The provider made (and charged for) the image: it is settled whether or not it could be kept.
    return { result: { ...(await this.keep(content, ctx)), ...revised }, units: 1 };
  }

  /** Stores an inline image in the request's workspace; the model gets where it is. */
  private async keep(content: Buffer, ctx: ToolContext): Promise<ToolResult> {
    const type = imageTypeOf(content);
    const path = `images/image_${randomBytes(6).toString('hex')}.${type.ext}`;
    try {
      await this.files.writeIn(ctx.workspace, path, content, { signal: ctx.signal, requestId: ctx.requestId });
    } catch (err) {
      const why = failureOf(err).why as string;
      return failed('image_not_stored', `The image was made but could not be stored in the workspace (${why}); it is not available.`);
    }
    const session = ctx.workspace.clientSession;
    return {
      ok: true,
      file: path,
      bytes: content.length,
      media_type: type.mime,
      note:
        session !== undefined
          ? `Saved in session ${session} (run_code sees it at ${path}); the user can download it from /v1/sessions/${session}/files/${path}.`
          : `Saved in this request's own workspace (run_code sees it at ${path}). The request has no X-Drael-Session, so the file is deleted when this answer ends.`,
    };
  }
}

/** The image format from its first bytes (the provider's answer does not say). */
function imageTypeOf(bytes: Buffer): { ext: string; mime: string } {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return { ext: 'png', mime: 'image/png' };
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { ext: 'jpg', mime: 'image/jpeg' };
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return { ext: 'webp', mime: 'image/webp' };
  if (bytes.subarray(0, 4).toString('latin1') === 'GIF8') return { ext: 'gif', mime: 'image/gif' };
  return { ext: 'bin', mime: 'application/octet-stream' };
}
