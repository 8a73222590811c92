import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants.js';

/**
 * Who may call a route: anyone (`public`), a caller with an API key (`key`), or the operator with
 * the admin token (`admin`). Decided on the route Fastify matched, so whatever spelling of the
 * path reached it (`/%761/models`, `/v%31/models`) meets the same rule.
 */
export type RouteAccess = 'public' | 'key' | 'admin';

/** The Fastify route config key the access rides on (RouteConfig metadata, read by the onRoute hook). */
interface AccessConfig {
  access?: RouteAccess;
}

/**
 * Fail closed: a route says nothing, it needs a key. Only a marker where the route is declared
 * (`@Public()`, `@AdminOnly()`) changes that.
 */
export function accessOf(config: unknown): RouteAccess {
  const access = (config as AccessConfig | undefined)?.access;
  return access === 'public' || access === 'admin' ? access : 'key';
}

/**
 * Sets the access on a route method, or on every route method of a controller class. Nest copies
 * a method's metadata to the handler it gives Fastify and turns RouteConfig's into the route's
 * `config`, so the onRoute hook sees it at registration.
 */
function markAccess(access: RouteAccess): ClassDecorator & MethodDecorator {
  return ((target: object | (new (...args: never[]) => unknown), _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const mark = (fn: object) => {
      const config = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, fn) as object | undefined) ?? {};
      Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...config, access }, fn);
    };
    if (descriptor) {
      mark(descriptor.value as object);
      return descriptor;
    }
    const proto = (target as { prototype: Record<string, unknown> }).prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
      if (name !== 'constructor' && typeof value === 'function') mark(value);
    }
    return undefined;
  }) as ClassDecorator & MethodDecorator;
}

/** This route answers without a key. The README lists every route so marked; a test asserts the list. */
export const Public = (): ClassDecorator & MethodDecorator => markAccess('public');

/** This route (or every route of this controller) needs `Authorization: Bearer $DRAEL_ADMIN_TOKEN`. */
export const AdminOnly = (): ClassDecorator & MethodDecorator => markAccess('admin');
