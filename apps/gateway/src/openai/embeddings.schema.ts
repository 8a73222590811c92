import { z } from 'zod';

/**
 * Bounds of an embeddings request. OpenAI's own: at most 2,048 inputs a request, each at most
 * 8,192 tokens (a token array of that length, or a string of a few bytes a token); the body limit
 * of the HTTP layer bounds the whole.
 */
export const MAX_EMBEDDING_INPUTS = 2048;
const MAX_INPUT_TOKENS = 8192;
const MAX_INPUT_CHARS = MAX_INPUT_TOKENS * 8;

const TokenId = z
  .number()
  .int()
  .nonnegative()
  .max(2 ** 31 - 1);
const TextInput = z.string().min(1, 'an input must not be empty').max(MAX_INPUT_CHARS);
const TokenInput = z.array(TokenId).min(1, 'an input must not be empty').max(MAX_INPUT_TOKENS);

/**
 * POST /v1/embeddings (OpenAI's request): the input is one text, a list of texts, one token
 * array or a list of token arrays. Checked here so a malformed request is a 400 naming the field,
 * not an upstream's; the body goes to the deployment as the client sent it (model name aside).
 */
export const EmbeddingsRequestSchema = z
  .object({
    model: z.string().min(1).max(256),
    input: z.union([TextInput, z.array(TextInput).min(1).max(MAX_EMBEDDING_INPUTS), TokenInput, z.array(TokenInput).min(1).max(MAX_EMBEDDING_INPUTS)]),
    encoding_format: z.enum(['float', 'base64']).optional(),
    dimensions: z.number().int().positive().max(65_536).optional(),
    user: z.string().max(256).optional(),
  })
  .loose();

/** What the upstream answers (OpenAI's list of embeddings), as documented for clients: passed through as it came. */
export const EmbeddingsResponseSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(z.object({ object: z.literal('embedding'), index: z.number().int().nonnegative(), embedding: z.union([z.array(z.number()), z.string()]) }).loose()),
    model: z.string(),
    usage: z.object({ prompt_tokens: z.number().int().nonnegative(), total_tokens: z.number().int().nonnegative() }).loose(),
  })
  .loose();
