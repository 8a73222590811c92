import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LoggerService } from '@nestjs/common';
import { currentTraceId } from '@drael/tracing';

export type { Logger } from 'pino';

interface RequestContext {
  readonly requestId: string;
}

const requestContext = new AsyncLocalStorage<RequestContext>();

/** The request id of the work in progress, if any: every log line and outgoing NATS request carries it. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

export function newRequestId(): string {
  return randomUUID();
}

// A caller's id is kept only if it is short and printable, so it cannot bloat or forge log lines.
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id a caller sent (an HTTP `x-request-id`, a NATS `x-request-id` header), when it is
 * one this system keeps: 1-128 characters of `A-Za-z0-9._:-`. Anything else, or nothing, is
 * undefined: the caller then gets an id of ours, never its text in every log line.
 */
export function acceptedRequestId(given: unknown): string | undefined {
  return typeof given === 'string' && ACCEPTABLE_REQUEST_ID.test(given) ? given : undefined;
}

/** Runs `fn` with `requestId` as the current request id. */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestContext.run({ requestId }, fn);
}

/**
 * One JSON logger per process, tagging each line with its service, the current request id and,
 * when tracing is on, the current trace's id (`trace_id`, to find the line's trace).
 * `destination` defaults to synchronous stdout; a hot path (the gateway's access log) may pass a
 * buffered one (see `bufferedStdout`).
 */
export function createLogger(service: string, level = 'info', destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const requestId = currentRequestId();
      const traceId = currentTraceId();
      if (traceId) return requestId ? { request_id: requestId, trace_id: traceId } : { trace_id: traceId };
      return requestId ? { request_id: requestId } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Stdout written in 4 KiB batches instead of one write(2) per line (a per-request access log
 * made those syscalls a tenth of the gateway's CPU), flushed at least every `flushMs` and
 * synchronously by `flushSync()`, which the owner calls before exiting. (Synchronous 8 KiB
 * batches, which skip libuv's thread pool, measured no lower: bench/gateway-passthrough README.)
 */
export function bufferedStdout(flushMs = 500): DestinationStream & { flushSync(): void } {
  const dest = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  // sonic-boom's flush() writes even when nothing is buffered (an empty write(2) on libuv's thread
  // pool, and a wake-up of the loop, twice a second in every idle process): flush only after a write.
  let written = false;
  const write = dest.write.bind(dest);
  // A const first: V8 pretenures a function literal assigned to a property (eslint.config.js).
  const writeNoting = (data: string) => {
    written = true;
    return write(data);
  };
  dest.write = writeNoting;
  setInterval(() => {
    if (!written) return;
    written = false;
    dest.flush();
  }, flushMs).unref();
  return dest;
}

/** One access line: request id, method, url, status, milliseconds, and the trace's id when tracing is on. */
export type AccessLog = (requestId: string, method: string, url: string, status: number, ms: number, traceId?: string) => void;

/**
 * The per-request access line written straight to `logger`'s destination, formatted by hand:
 * the same JSON line `logger.info({request_id, method, url, status, ms}, 'request')` writes
 * (level, time, service, the fields, trace_id when given, msg), without pino's per-call
 * serializing, merging and mixin, which showed in the gateway's CPU profile per request.
 */
export function createAccessLog(logger: Logger, service: string): AccessLog {
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  const head = `{"level":${logger.levels.values.info},"time":"`;
  const afterTime = `","service":${JSON.stringify(service)},"request_id":`;
  // The timestamp is formatted once per millisecond: a busy gateway writes several lines in each.
  let stampMs = 0;
  let stamp = '';
  return (requestId, method, url, status, ms, traceId) => {
    if (!logger.isLevelEnabled('info')) return;
    const now = Date.now();
    if (now !== stampMs) {
      stampMs = now;
      stamp = new Date(now).toISOString();
    }
    stream.write(
      `${head}${stamp}${afterTime}${JSON.stringify(requestId)},"method":${JSON.stringify(method)},"url":${JSON.stringify(url)},"status":${status},"ms":${ms},${traceId ? `"trace_id":"${traceId}",` : ''}"msg":"request"}\n`,
    );
  };
}

/** Routes Nest's own framework logs through the same JSON logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
