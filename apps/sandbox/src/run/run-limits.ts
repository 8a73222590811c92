import { DEFAULT_TIMEOUT_S, MAX_CODE_BYTES, MAX_TIMEOUT_S, sandboxCatalog, type SandboxRunRequest } from '@drael/contracts';
import { SandboxError } from '../sandbox-error.js';

export function assertCodeSize(code: string): void {
  // spec 01: a program is at most 256 KiB of source (counted in UTF-8 bytes).
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes > MAX_CODE_BYTES) {
    throw new SandboxError('code_too_large', `the program is ${bytes} bytes; at most ${MAX_CODE_BYTES} bytes (256 KiB) are accepted`, false, {
      param: 'code',
      max_bytes: MAX_CODE_BYTES,
    });
  }
}

/** spec 01: 30 s unless the run asks for longer, never more than 300 s; 0, negative, NaN refused. */
export function resolveTimeoutS(timeout: number | undefined): number {
  if (timeout === undefined) return DEFAULT_TIMEOUT_S;
  if (!Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_TIMEOUT_S) {
    throw new SandboxError('invalid_timeout', `timeout_s must be more than 0 and at most ${MAX_TIMEOUT_S}`, false, { param: 'timeout_s' });
  }
  return timeout;
}

/** How long a caller of sandbox.run.v1 waits for the answer: the catalog's own bound (the run's limit plus slack), as NatsRpcClient reads it. */
export function runWaitMs(req: SandboxRunRequest): number {
  return sandboxCatalog.run.timeoutFor?.(req) ?? sandboxCatalog.run.timeoutMs;
}

/**
 * The latest moment (epoch ms) a run received at `receivedAt` may start: while its caller still
 * waits for the whole of its time limit (the caller waits runWaitMs from sending it). A run that
 * starts later could be answered to nobody, so it is refused `sandbox_busy` instead (issue F8:
 * abandoned queued runs kept the sandbox busy for minutes after their request had ended).
 */
export function startDeadlineOf(req: SandboxRunRequest, receivedAt: number): number {
  return receivedAt + runWaitMs(req) - resolveTimeoutS(req.timeout_s) * 1000;
}
