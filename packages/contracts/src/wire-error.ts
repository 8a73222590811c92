import { z } from 'zod';

/**
 * Codes every service may answer with, whatever its own enum says. `payload_too_large`: the
 * request cannot travel as one NATS message (the typed client refuses it before sending).
 */
export const COMMON_ERROR_CODES = ['bad_request', 'internal', 'unavailable', 'timeout', 'payload_too_large'] as const;
export type CommonErrorCode = (typeof COMMON_ERROR_CODES)[number];

/**
 * The error list of one subject: the common codes and those of its service's enum (`All`) that its
 * handler can throw, no more (packages/nats-rpc's declared-error-codes test holds each list to the
 * handler's throw sites). `const errors = subjectErrors<SandboxErrorCode>(); errors('file_not_found')`.
 */
export function subjectErrors<All extends string>() {
  return <const Own extends All = never>(...own: Own[]): readonly (CommonErrorCode | Own)[] => [...COMMON_ERROR_CODES, ...own];
}

/** The error half of every reply on the wire. */
export const WireErrorSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
  retryable: z.boolean(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type WireError = z.infer<typeof WireErrorSchema>;

/** A reply is either the result or a typed error, never both. */
export function replyEnvelope<T extends z.ZodType>(result: T) {
  return z.union([z.object({ result }).strict(), z.object({ error: WireErrorSchema }).strict()]);
}

/** The OpenAI error envelope, the one shape every HTTP error leaves the gateway in. */
export const OpenAIErrorEnvelopeSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
    // Some errors name what they are about (e.g. upstream_error: the page's status and URL).
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type OpenAIErrorEnvelope = z.infer<typeof OpenAIErrorEnvelopeSchema>;
