import { request } from 'undici';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '@drael/contracts';

export class ProviderError extends Error {
  constructor(
    readonly code: 'provider_unreachable' | 'provider_error' | 'provider_timeout' | 'provider_bad_answer',
    message: string,
    /** True once the provider has answered: the attempt reached it (what a per-attempt price counts). */
    readonly attempted: boolean,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

// A provider's answer larger than this is not a result we can use.
const MAX_PROVIDER_BODY_BYTES = 4 * 1024 * 1024;

/**
 * POST JSON to a paid third-party provider and read its JSON answer: the one place that speaks
 * HTTP to them. Failures are typed ProviderErrors. No abort signal: a call, once sent, is paid for
 * and runs to its answer or its timeout (BillingHolds.around).
 */
export async function postJson(url: string, apiKey: string, body: unknown, options: { timeoutMs: number }): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    // A headers or body timeout comes after the request was sent: the provider has the attempt.
    if (code.includes('TIMEOUT')) throw new ProviderError('provider_timeout', `the provider did not answer within ${options.timeoutMs} ms`, code !== 'UND_ERR_CONNECT_TIMEOUT');
    throw new ProviderError('provider_unreachable', `the provider could not be reached (${code || (err as Error).message})`, false);
  }
  let text: string;
  try {
    text = await readCapped(res.body);
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    // The provider answered (its status line came) and then stalled or cut its body.
    const timedOut = ((err as { code?: string }).code ?? '').includes('TIMEOUT');
    throw new ProviderError(
      timedOut ? 'provider_timeout' : 'provider_bad_answer',
      timedOut ? `the provider did not finish its answer within ${options.timeoutMs} ms` : 'the provider cut its answer short',
      true,
    );
  }
  if (res.statusCode >= 400) {
    throw new ProviderError('provider_error', `the provider answered ${res.statusCode}: ${errorMessageOf(text)}`, true);
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError('provider_bad_answer', 'the provider answered with something that is not JSON', true);
  }
  // The answer is walked (its fields cut, tool-result.ts cutFields) and serialised, each a recursion
  // as deep as the JSON: 10,000 nested arrays (20 KB) overflowed the stack, a 500 for the request.
  // Held to the depth every request and NATS message is held to.
  if (nestedDeeperThan(answer, MAX_JSON_DEPTH)) {
    throw new ProviderError('provider_bad_answer', `the provider answered with JSON nested deeper than ${MAX_JSON_DEPTH} levels`, true);
  }
  return answer;
}

async function readCapped(body: AsyncIterable<Buffer | Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_PROVIDER_BODY_BYTES) throw new ProviderError('provider_bad_answer', 'the provider answer is too large', true);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function errorMessageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: the start of the text says enough
  }
  return text.slice(0, 300);
}
