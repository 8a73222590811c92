import { z } from 'zod';

/** The services that answer on NATS. Each one's queue group is its name. */
export const SERVICE_NAMES = ['gateway', 'sandbox', 'search', 'fetch', 'billing', 'agent-run'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * One message of a service: a versioned subject, its request and reply schemas, the error codes
 * it may answer with, and how long a caller waits by default. Types are inferred from the schemas.
 */
export interface RpcEntry<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType, Code extends string = string> {
  readonly subject: string;
  readonly service: ServiceName;
  readonly request: Req;
  readonly reply: Res;
  readonly errors: readonly Code[];
  readonly timeoutMs: number;
  /**
   * How long a caller waits for this request, when it depends on the request (a run's `timeout_s`
   * plus a small slack): a caller whose replica died is told so by the missing heartbeats within
   * seconds, and this bounds the rest. Absent: `timeoutMs`. A method, so entries stay assignable
   * to `RpcEntry` whatever their request type.
   */
  timeoutFor?(request: z.output<Req>): number;
  /**
   * The request has no effect a second execution could repeat (a read, or a write whose replay
   * leaves the same state and the same reply). Only such a request is retried once, on another
   * replica, when its serving replica dies mid-request; absent means false (fail closed: a run,
   * a hold, a model call is never sent twice). Declared here, per subject, and nowhere else.
   */
  readonly idempotent?: boolean;
  /**
   * Who receives a request. Absent or `queue-group`: one replica of the service's queue group (the
   * usual request/reply, a `$SRV` endpoint, checked at boot to have one handler). `every-replica`:
   * every replica, through a plain subscription outside the queue group, and only a replica with
   * something to do answers (sandbox.run.cancel.v1: the one running the run); its own listener
   * handles it, so the boot check and `$SRV.INFO` leave it out (`queueGroupCatalog`).
   */
  readonly delivery?: 'queue-group' | 'every-replica';
}

export type RequestOf<E extends RpcEntry> = z.input<E['request']>;
export type ParsedRequestOf<E extends RpcEntry> = z.output<E['request']>;
export type ReplyOf<E extends RpcEntry> = z.output<E['reply']>;
export type ErrorCodeOf<E extends RpcEntry> = E['errors'][number];

const SUBJECT = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9_-]*)+\.v[0-9]+$/;

export function defineEntry<Req extends z.ZodType, Res extends z.ZodType, Code extends string>(entry: RpcEntry<Req, Res, Code>): RpcEntry<Req, Res, Code> {
  if (!SUBJECT.test(entry.subject)) throw new Error(`subject ${entry.subject} is not <service>.<name>.v<N>`);
  if (!entry.subject.startsWith(`${entry.service}.`)) {
    throw new Error(`subject ${entry.subject} does not start with its service name ${entry.service}`);
  }
  return entry;
}

/** A catalog: every message one service answers, keyed by a short name. */
export type Catalog = Readonly<Record<string, RpcEntry>>;

export function catalogEntries(catalog: Catalog): RpcEntry[] {
  return Object.values(catalog);
}

/** The entries one replica of the queue group answers: all but the `every-replica` broadcasts. */
export function queueGroupCatalog(catalog: Catalog): Catalog {
  return Object.fromEntries(Object.entries(catalog).filter(([, entry]) => entry.delivery !== 'every-replica'));
}
