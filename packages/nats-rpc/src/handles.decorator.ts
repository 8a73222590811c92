import { Ctx, MessagePattern, Payload, type NatsContext } from '@nestjs/microservices';
import type { RpcEntry } from '@drael/contracts';
import { compiledCheck } from '@drael/schema-check';
import { acceptedRequestId, currentRequestId, newRequestId, withRequestId, type Logger } from '@drael/logger';
import { inSpan } from '@drael/tracing';
import { badRequestOf, RpcError } from './rpc-error.js';
import { REQUEST_ID_HEADER, TRACEPARENT_HEADER } from './subject.js';
import { inFlight } from './in-flight.js';
import { trackHandler } from './rpc.metrics.js';
import { recordHandlesMethod } from './direct-dispatch.js';

/** Subjects handled in this process, with the handlers that claim each (the boot check reads it). */
export const handlerRegistry = new Map<string, string[]>();

let handlerLogger: Pick<Logger, 'error'> | undefined;
/** The logger unexpected handler failures are written to (set once at boot). */
export function setHandlerLogger(logger: Pick<Logger, 'error'>): void {
  handlerLogger = logger;
}

let isUnavailable: ((err: unknown) => boolean) | undefined;
/**
 * Which unexpected failures are a dependency that cannot be used at that moment (a service's
 * database down or restarting): answered `unavailable`, retryable, instead of `internal`, so a
 * caller retries and the gateway answers 503 rather than a 500 for an outage (set once at boot).
 */
export function setUnavailableWhen(test: ((err: unknown) => boolean) | undefined): void {
  isUnavailable = test;
}

function headerOf(ctx: unknown, name: string): string | undefined {
  const value: unknown = (ctx as NatsContext | undefined)?.getHeaders?.()?.get?.(name);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function requestIdOf(ctx: unknown): string {
  return acceptedRequestId(headerOf(ctx, REQUEST_ID_HEADER)) ?? currentRequestId() ?? newRequestId();
}

/**
 * Marks a method as the handler of one catalog entry. The payload is validated against the
 * entry's request schema before the method runs; the method receives the parsed request and
 * the NATS context; whatever it returns or throws leaves as the reply envelope. A bad payload
 * answers `bad_request` and never reaches the method; an unexpected exception answers
 * `internal` and is logged, so one bad message cannot take the service down. A typed error whose
 * code the entry does not declare (`entry.errors`) is a defect of the handler, not an answer: it
 * is logged and answers `internal`, so a caller only ever sees the codes the catalog promises.
 * The method runs in the caller's request id and in a server span whose parent is the caller's
 * `traceparent` header (a Nest packet or a plain JSON request alike; no header: a new trace).
 */
export function Handles(entry: RpcEntry): MethodDecorator {
  return (target, propertyKey, descriptor: PropertyDescriptor) => {
    const original = descriptor.value as (req: unknown, ctx: NatsContext) => unknown;
    const name = `${(target as { constructor: { name: string } }).constructor.name}.${String(propertyKey)}`;
    const declared = new Set<string>(entry.errors);
    // The payload is parsed JSON (Nest's packet or a plain request): compiled where the schema allows.
    const requestCheck = compiledCheck(entry.request);
    handlerRegistry.set(entry.subject, [...(handlerRegistry.get(entry.subject) ?? []), name]);

    const wrapped = async function (this: unknown, payload: unknown, ctx: NatsContext) {
      inFlight.enter();
      const settled = trackHandler(entry.subject);
      let outcome = 'internal';
      try {
        const traced = { kind: 'server', parent: headerOf(ctx, TRACEPARENT_HEADER), attributes: { 'rpc.system': 'nats', 'rpc.service': entry.service } } as const;
        const reply: { result?: unknown; error?: { code: string } } = await withRequestId(requestIdOf(ctx), () =>
          inSpan(entry.subject, traced, async (span) => {
            const parsed = requestCheck.safeParse(payload);
            if (!parsed.success) {
              span.setAttributes({ 'rpc.error_code': 'bad_request' });
              return { error: badRequestOf(parsed.error).toWire() };
            }
            try {
              return { result: await original.call(this, parsed.data, ctx) };
            } catch (err) {
              // A typed error of a declared code is an answer, not a failure of the span; anything else is both.
              if (err instanceof RpcError && declared.has(err.code)) {
                span.setAttributes({ 'rpc.error_code': err.code });
                return { error: err.toWire() };
              }
              span.fail(err);
              if (!(err instanceof RpcError) && isUnavailable?.(err)) {
                span.setAttributes({ 'rpc.error_code': 'unavailable' });
                handlerLogger?.error({ err, subject: entry.subject }, 'handler failed: a dependency is unavailable');
                return { error: new RpcError('unavailable', `${entry.service}: its database is unavailable; retry shortly`, true).toWire() };
              }
              const undeclared = err instanceof RpcError ? { undeclared_code: err.code } : {};
              handlerLogger?.error(
                { err, subject: entry.subject, ...undeclared },
                err instanceof RpcError ? 'handler threw a code its subject does not declare' : 'handler failed',
              );
              return { error: new RpcError('internal', 'internal error', true).toWire() };
            }
          }),
        );
        outcome = reply.error ? reply.error.code : 'ok';
        return reply;
      } finally {
        settled(outcome);
        inFlight.leave();
      }
    };
    Object.defineProperty(wrapped, 'name', { value: original.name });
    descriptor.value = wrapped;
    // The server may call it without Nest's per-message pipeline when nothing wraps it (direct-dispatch.ts).
    recordHandlesMethod(entry.subject, { owner: (target as { constructor: new () => unknown }).constructor, key: propertyKey, method: wrapped });
    MessagePattern(entry.subject)(target, propertyKey, descriptor);
    // Explicit argument bindings: without them Nest passes only as many arguments as the
    // original method declares, and the NATS context (with the headers) would be lost.
    Payload()(target, propertyKey, 0);
    Ctx()(target, propertyKey, 1);
    return descriptor;
  };
}
