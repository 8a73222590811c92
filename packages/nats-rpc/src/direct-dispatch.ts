import { ApplicationConfig } from '@nestjs/core';
import { EXCEPTION_FILTERS_METADATA, GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RpcParamtype } from '@nestjs/microservices/enums/rpc-paramtype.enum.js';
import type { NatsContext } from '@nestjs/microservices';

/** An @Handles method as the decorator left it (it builds the reply envelope and never throws an answer). */
export type HandlesMethod = (payload: unknown, ctx: NatsContext) => Promise<unknown>;

interface HandlesDefinition {
  /** The controller class that declares it. */
  owner: abstract new (
    ...args: never[]
  ) => unknown;
  key: string | symbol;
  method: HandlesMethod;
}

/** Each subject's @Handles method; a subject claimed twice has none here (the catalog check refuses it at boot). */
const definitions = new Map<string, HandlesDefinition | 'claimed twice'>();

/** Called by @Handles for every method it decorates. */
export function recordHandlesMethod(subject: string, definition: HandlesDefinition): void {
  definitions.set(subject, definitions.has(subject) ? 'claimed twice' : definition);
}

/** What the server needs of the app to call a handler itself: its instance and the app-wide enhancers. */
export interface DirectDispatchSource {
  /** The controller's one (static-scope) instance; throws or returns nothing when it has none. */
  instanceOf(owner: HandlesDefinition['owner']): unknown;
  /** Nest's ApplicationConfig of the app (global guards, pipes, interceptors, filters, hooks). */
  applicationConfig: unknown;
}

/**
 * The @Handles method a subject's messages may be given directly, skipping Nest's per-message
 * pipeline (param extraction, guards, interceptors, pipes, exception filters: five or six promise
 * hops, ~50 µs a message on a cold process, issue 20). Only when that pipeline would do nothing:
 * no guard, interceptor, pipe or filter on the method, its class or the app (the request-scoped
 * kinds and pre-request hooks included), no parameter other than the payload and context
 * @Handles binds, and a static-scope instance whose method is the decorated one. Anything else,
 * or anything this cannot read (a Nest upgrade that moved it), answers `undefined`: the subject
 * keeps Nest's handler, so a guard added later is never skipped (fail closed).
 */
export function directHandler(subject: string, source: DirectDispatchSource | undefined): ((payload: unknown, ctx: NatsContext) => Promise<unknown>) | undefined {
  const definition = definitions.get(subject);
  if (!source || !definition || definition === 'claimed twice') return undefined;
  if (!noGlobalEnhancers(source.applicationConfig)) return undefined;
  const { owner, key, method } = definition;
  for (const name of [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA]) {
    if (hasAny(Reflect.getMetadata(name, owner)) || hasAny(Reflect.getMetadata(name, method))) return undefined;
  }
  if (!onlyPayloadAndContext(Reflect.getMetadata(ROUTE_ARGS_METADATA, owner, key))) return undefined;
  let instance: unknown;
  try {
    instance = source.instanceOf(owner);
  } catch {
    return undefined;
  }
  if (typeof instance !== 'object' || instance === null || (instance as Record<string | symbol, unknown>)[key] !== method) return undefined;
  return (payload, ctx) => method.call(instance, payload, ctx);
}

const GLOBAL_ENHANCERS = [
  'getGlobalGuards',
  'getGlobalInterceptors',
  'getGlobalPipes',
  'getGlobalFilters',
  'getGlobalRequestGuards',
  'getGlobalRequestInterceptors',
  'getGlobalRequestPipes',
  'getGlobalRequestFilters',
  'getGlobalPreRequestHooks',
] as const;

function noGlobalEnhancers(config: unknown): boolean {
  if (!(config instanceof ApplicationConfig)) return false;
  return GLOBAL_ENHANCERS.every((getter) => {
    const read = (config as unknown as Record<string, unknown>)[getter];
    if (typeof read !== 'function') return false;
    const list: unknown = read.call(config);
    return Array.isArray(list) && list.length === 0;
  });
}

function hasAny(value: unknown): boolean {
  return value !== undefined && (!Array.isArray(value) || value.length > 0);
}

/** Exactly what @Handles binds: the payload at 0 and the context at 1, neither with a pipe or a property name. */
function onlyPayloadAndContext(args: unknown): boolean {
  if (typeof args !== 'object' || args === null) return false;
  const params = Object.entries(args as Record<string, { index?: unknown; data?: unknown; pipes?: unknown; factory?: unknown }>);
  const expected = new Map([
    [`${RpcParamtype.PAYLOAD}:0`, 0],
    [`${RpcParamtype.CONTEXT}:1`, 1],
  ]);
  return (
    params.length === expected.size &&
    params.every(
      ([k, p]) => expected.get(k) === p.index && p.data === undefined && p.factory === undefined && (p.pipes === undefined || (Array.isArray(p.pipes) && p.pipes.length === 0)),
    )
  );
}
