import { Ctx, MessagePattern, Payload, type NatsContext } from '@nestjs/microservices';
import type { RpcEntry } from '@drael/contracts';
import { currentRequestId, newRequestId, withRequestId, type Logger } from '@drael/logger';
import { RpcError } from './rpc-error.js';
import { REQUEST_ID_HEADER } from './subject.js';
import { inFlight } from './in-flight.js';

/** Subjects handled in this process, with the handlers that claim each (the boot check reads it). */
export const handlerRegistry = new Map<string, string[]>();

let handlerLogger: Pick<Logger, 'error'> | undefined;
/** The logger unexpected handler failures are written to (set once at boot). */
export function setHandlerLogger(logger: Pick<Logger, 'error'>): void {
  handlerLogger = logger;
}

function requestIdOf(ctx: unknown): string {
  const headers = (ctx as NatsContext | undefined)?.getHeaders?.();
  const fromHeader: unknown = headers?.get?.(REQUEST_ID_HEADER);
  return typeof fromHeader === 'string' && fromHeader.length > 0 ? fromHeader : (currentRequestId() ?? newRequestId());
}

/**
 * Marks a method as the handler of one catalog entry. The payload is validated against the
 * entry's request schema before the method runs; the method receives the parsed request and
 * the NATS context; whatever it returns or throws leaves as the reply envelope. A bad payload
 * answers `bad_request` and never reaches the method; an unexpected exception answers
 * `internal` and is logged, so one bad message cannot take the service down. A typed error whose
 * code the entry does not declare (`entry.errors`) is a defect of the handler, not an answer: it
 * is logged and answers `internal`, so a caller only ever sees the codes the catalog promises.
 */
export function Handles(entry: RpcEntry): MethodDecorator {
  return (target, propertyKey, descriptor: PropertyDescriptor) => {
    const original = descriptor.value as (req: unknown, ctx: NatsContext) => unknown;
    const name = `${(target as { constructor: { name: string } }).constructor.name}.${String(propertyKey)}`;
    const declared = new Set<string>(entry.errors);
    handlerRegistry.set(entry.subject, [...(handlerRegistry.get(entry.subject) ?? []), name]);

    const wrapped = async function (this: unknown, payload: unknown, ctx: NatsContext) {
      inFlight.enter();
      try {
        return await withRequestId(requestIdOf(ctx), async () => {
          const parsed = entry.request.safeParse(payload);
          if (!parsed.success) {
            const issue = parsed.error.issues[0];
            return {
              error: new RpcError('bad_request', `${issue?.path.join('.') || 'payload'}: ${issue?.message ?? 'invalid'}`, false, {
                param: issue?.path.join('.') || null,
              }).toWire(),
            };
          }
          try {
            return { result: await original.call(this, parsed.data, ctx) };
          } catch (err) {
            if (err instanceof RpcError && declared.has(err.code)) return { error: err.toWire() };
            const undeclared = err instanceof RpcError ? { undeclared_code: err.code } : {};
            handlerLogger?.error({ err, subject: entry.subject, ...undeclared }, err instanceof RpcError ? 'handler threw a code its subject does not declare' : 'handler failed');
            return { error: new RpcError('internal', 'internal error', true).toWire() };
          }
        });
      } finally {
        inFlight.leave();
      }
    };
    Object.defineProperty(wrapped, 'name', { value: original.name });
    descriptor.value = wrapped;
    MessagePattern(entry.subject)(target, propertyKey, descriptor);
    // Explicit argument bindings: without them Nest passes only as many arguments as the
    // original method declares, and the NATS context (with the headers) would be lost.
    Payload()(target, propertyKey, 0);
    Ctx()(target, propertyKey, 1);
    return descriptor;
  };
}
