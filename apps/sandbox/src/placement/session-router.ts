import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SandboxError } from '../sandbox-error.js';
import { headers as natsHeaders, type Msg, type Subscription } from '@nats-io/transport-node';
import {
  DEPTH_PRESCAN_FROM_BYTES,
  jsonTextNestedDeeperThan,
  MAX_JSON_DEPTH,
  replyEnvelope,
  sandboxCatalog,
  sandboxInstanceSubject,
  SANDBOX_ROUTED_ENTRIES,
  type ParsedRequestOf,
  type ReplyOf,
  type RpcEntry,
  type WorkspaceScope,
} from '@drael/contracts';
import { acceptedRequestId, createLogger, currentRequestId, newRequestId, withRequestId } from '@drael/logger';
import { badRequestOf, inFlight, REQUEST_ID_HEADER, respondBounded, RpcError, wireSubject } from '@drael/nats-rpc';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { WorkspaceStore } from '../workspace/workspace-store.js';
import { assertSessionId, WorkspaceService, type WorkspaceRef } from '../workspace/workspace.service.js';
import { SANDBOX_STORES, type SandboxStores } from './sandbox-stores.js';
import { describeStoreFailure, SessionPlacement, type Placement } from './session-placement.service.js';
import { answering } from '../after-answer.js';

type RoutedName = (typeof SANDBOX_ROUTED_ENTRIES)[number];
type RoutedEntry = (typeof sandboxCatalog)[RoutedName];
type WorkspaceRequest = { tenant: string; session?: string | undefined; scope?: WorkspaceScope | undefined };

/** How one catalog entry is answered when its session is held here, and what it does to the session. */
export interface Route<E extends RoutedEntry> {
  entry: E;
  /** The call makes the workspace if it does not exist. */
  create: boolean;
  /** The call may change the files: the workspace is saved before the call is answered. */
  mutates: boolean;
  /** A call that changes the files but leaves their save to a later call (a piece of an upload with more to come). */
  savesLater?(req: ParsedRequestOf<E>): boolean;
  /** The call needs the files (false for a delete: a session taken over is deleted, not restored first). */
  needsFiles: boolean;
  /**
   * The call may run beside its placement instead of after it: it has no effect outside its
   * workspace and its answer (a run without the network), so when the placement then says the
   * workspace is not this replica's to use as it is (held elsewhere, taken over, gone), its
   * result is dropped, and the call is answered as if it had waited (forwarded, or run again on
   * the restored or new workspace). Only for a workspace this replica holds, or a new request's.
   */
  runsBeside?(req: ParsedRequestOf<E>): boolean;
  /** Input checks that refuse a call before anything is placed or created. */
  validate?(req: ParsedRequestOf<E>): void;
  /** How long a forwarded call may take (default: the entry's timeout). */
  timeoutMs?(req: ParsedRequestOf<E>): number;
  /**
   * A call whose answer is more than its files (a run: its program's output): when its save is
   * refused because the workspace holds more than a save keeps, it is answered with `reply` and
   * that refusal (the caller learns both) instead of the refusal alone.
   */
  answerUnsaved?(reply: ReplyOf<E>, refused: RpcError): ReplyOf<E>;
  /** `stop`: aborted when a call run beside its placement is found not to be this replica's (runsBeside). */
  local(req: ParsedRequestOf<E>, placed: Placement | undefined, stop?: AbortSignal): Promise<ReplyOf<E>>;
}

// How often a replica forwarding a call checks that the session's holder still listens.
const HOLDER_PROBE_MS = 1_000;

/**
 * A save refused for room, the workspace's files kept on this replica's disk for a later save: the
 * workspace holds more than its manifest may list (workspace-manifest.ts ScanLimits), or the
 * tenant's saved copies would pass its budget (tenant-store-budget.ts).
 */
function isSaveRefusedForRoom(err: RpcError): boolean {
  if (err.code !== 'quota_exceeded') return false;
  const limit = err.details?.limit;
  return limit === 'workspace_entries' || limit === 'workspace_path_bytes' || err.details?.max_stored_bytes !== undefined;
}

/** NATS's immediate answer to a request nobody is subscribed to. */
function isNoResponders(err: unknown): boolean {
  const text = `${(err as Error).name} ${(err as Error).message}`.toLowerCase();
  return text.includes('no responders') || text.includes('503');
}

/**
 * Routes every call on a session to the replica holding it (placement: session-placement.service).
 * Callers keep using the catalog subjects through the queue group (the typed client and plain
 * JSON alike); the replica that receives a call either answers it (it holds the session, or has
 * just claimed or taken it over, restoring its saved files first) or forwards it to the holder on
 * the holder's per-replica subject and relays the answer. A forwarded call that finds the session
 * moved again is refused (retryable), never forwarded twice. A holder whose subject nobody
 * listens on any more (its process died: NATS answers "no responders" at once) is taken over by
 * the replica forwarding to it; one whose heartbeat lapsed is taken over without trying it.
 */
@Injectable()
export class SessionRouter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly routes = new Map<string, Route<RoutedEntry>>();
  private readonly logger;
  private subscription?: Subscription;
  private readonly envelopes = new Map<string, ReturnType<typeof replyEnvelope>>();

  constructor(
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
    @Inject(SANDBOX_STORES) private readonly stores: SandboxStores,
    private readonly placement: SessionPlacement,
    private readonly store: WorkspaceStore,
    private readonly workspaces: WorkspaceService,
  ) {
    this.logger = createLogger('sandbox', config.LOG_LEVEL);
  }

  register<E extends RoutedEntry>(route: Route<E>): void {
    this.routes.set(route.entry.subject, route);
  }

  /** Answers a call that arrived through the queue group. */
  call<E extends RoutedEntry>(entry: E, req: ParsedRequestOf<E>): Promise<ReplyOf<E>> {
    const route = this.routes.get(entry.subject);
    if (!route) throw new Error(`no route for ${entry.subject}`);
    const answered = this.answer(route, req, false) as Promise<ReplyOf<E>>;
    // A run takes as long as its program does (its caller waits for that): only the calls whose
    // own work is the replica's are watched.
    return route.timeoutMs ? answered : this.watched(entry.subject, entry.timeoutMs, answered);
  }

  /**
   * A call still running at half the time its caller waits is logged then, and again when it is
   * answered: what an operator needs to tell a slow replica (its engine, its disk, JetStream) from
   * a caller's timeout.
   */
  private watched<T>(subject: string, waitMs: number, work: Promise<T>): Promise<T> {
    const started = performance.now();
    const halfMs = waitMs / 2;
    const elapsed = () => Math.round(performance.now() - started);
    const timer = setTimeout(
      () => this.logger.warn({ subject, elapsed_ms: elapsed(), caller_waits_ms: waitMs }, 'sandbox call still running at half the time its caller waits'),
      halfMs,
    );
    timer.unref();
    return work.finally(() => {
      clearTimeout(timer);
      const took = elapsed();
      if (took >= halfMs) this.logger.warn({ subject, took_ms: took, caller_waits_ms: waitMs }, 'slow sandbox call answered');
    });
  }

  private async answer(route: Route<RoutedEntry>, req: ParsedRequestOf<RoutedEntry>, forwarded: boolean): Promise<unknown> {
    const { tenant, session, scope } = req as WorkspaceRequest;
    // A run without a session has no workspace to place: any replica runs it.
    if (session === undefined) return route.local(req, undefined);
    route.validate?.(req);
    assertSessionId(session);
    const ref: WorkspaceRef = { tenant, session, scope };
    // issue 20: the placement's KV round trip (the fence against a takeover, or a new request's
    // claim) beside the run rather than before it.
    const beside = route.runsBeside?.(req) ? await this.placement.placeBeside(ref, route.create) : undefined;
    let early: Placement | undefined;
    if (beside) {
      const stop = new AbortController();
      const ran = route.local(req, undefined, stop.signal);
      // Settled either way before anything below touches the workspace again.
      const settled = ran.then(
        () => undefined,
        () => undefined,
      );
      let placed: Placement;
      try {
        placed = await beside.placed;
      } catch (err) {
        stop.abort();
        await settled;
        throw err;
      }
      if (placed.where === 'here' && placed.kept === true) {
        return this.commit(route, req, ref, placed.key, await ran);
      }
      // Not this replica's workspace as it was (held elsewhere, taken over, made anew): the run
      // here is stopped (a long program would otherwise run to its end for nothing) and dropped,
      // and the call is answered below as if it had waited for this placement. A new request's
      // workspace made here is another replica's: it goes.
      stop.abort();
      await settled;
      if (placed.where === 'there' && scope === 'request') await this.workspaces.discardCopy(ref).catch(() => undefined);
      early = placed;
    }
    // Twice at most: a holder found gone on the way (no subscription any more) is taken over.
    let unreachable: string | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      const placed = early ?? (await this.placement.place(ref, route.create, unreachable));
      early = undefined;
      if (placed.where === 'there') {
        if (forwarded) throw new SandboxError('unavailable', 'the session is moving between replicas; retry', true);
        const answer = await this.forward(route, placed.holder, req);
        if (answer.gone) {
          unreachable = placed.holder;
          continue;
        }
        return answer.value;
      }
      if (placed.where === 'here' && placed.takenOver && route.needsFiles) {
        try {
          // Never saved (its holder died during its first call): it starts empty, as that call's changes are lost.
          await this.store.restore(ref, placed.key, placed.restoreFrom);
        } catch (err) {
          // Not restored: the next call restores again instead of serving a stale or empty copy.
          this.placement.unhold(placed.key);
          throw err instanceof RpcError ? err : new SandboxError('unavailable', "the session's saved files could not be restored; retry", true);
        }
      }
      const result = await route.local(req, placed);
      return placed.where === 'here' ? this.commit(route, req, ref, placed.key, result) : result;
    }
    throw new SandboxError('unavailable', 'the replica holding this session stopped; retry', true);
  }

  /**
   * After a call answered here: its changes saved (a call that may change the files, unless it
   * leaves that to a later one), or its use noted. Returns the call's answer.
   */
  private async commit<R>(route: Route<RoutedEntry>, req: ParsedRequestOf<RoutedEntry>, ref: WorkspaceRef, key: string, result: R): Promise<R> {
    try {
      if (route.mutates && !(route.savesLater?.(req) ?? false)) await this.store.save(ref, key);
      else await this.placement.recordUse(key);
      return result;
    } catch (err) {
      if (err instanceof RpcError && route.answerUnsaved && isSaveRefusedForRoom(err)) {
        this.logger.warn({ key, details: err.details }, 'session save refused for room: the files stay on this replica until a save fits');
        return (route.answerUnsaved as (reply: R, refused: RpcError) => R)(result, err);
      }
      if (err instanceof RpcError) throw err;
      // Answered as done, the change would be lost with this replica: say it is not kept.
      this.logger.error({ err, key }, 'session save failed');
      throw new SandboxError('unavailable', `the session's files could not be saved, so the change may be lost: ${describeStoreFailure(err)}; retry`, true);
    }
  }

  /**
   * The call, answered by the holder. `gone`: nobody listens on the holder's subject (NATS says so
   * at once): its process died or lost NATS, so nothing of this call ran there, and the session
   * is taken over (a holder that comes back finds its record moved: compare-and-set fences it).
   */
  private async forward(route: Route<RoutedEntry>, holder: string, req: ParsedRequestOf<RoutedEntry>): Promise<{ gone: true } | { gone: false; value: unknown }> {
    const subject = wireSubject(sandboxInstanceSubject(holder, route.entry.subject), this.config.DRAEL_NATS_PREFIX);
    const headers = natsHeaders();
    headers.set(REQUEST_ID_HEADER, currentRequestId() ?? newRequestId());
    const timeout = route.timeoutMs?.(req) ?? route.entry.timeoutMs;
    const watch = this.watchHolder(holder);
    let body: unknown;
    try {
      const msg = await Promise.race([this.stores.nc.request(subject, JSON.stringify(req), { timeout, headers }), watch.died]);
      body = msg.json<unknown>();
    } catch (err) {
      if (err instanceof SandboxError) throw err;
      if (isNoResponders(err)) return { gone: true };
      const text = `${(err as Error).name} ${(err as Error).message}`.toLowerCase();
      if (text.includes('timeout')) throw new SandboxError('timeout', `the sandbox replica holding this session gave no answer within ${timeout} ms`, true);
      throw new SandboxError('unavailable', 'the replica holding this session could not be reached; retry', true);
    } finally {
      watch.stop();
    }
    const envelope = this.envelopeOf(route.entry).safeParse(body);
    if (!envelope.success) throw new SandboxError('internal', 'the replica holding this session answered out of contract', false);
    if ('error' in envelope.data) throw RpcError.fromWire(envelope.data.error);
    return { gone: false, value: envelope.data.result };
  }

  /**
   * Rejects `died` once the holder stops listening while a forwarded call waits on it (issue 19: a
   * caller learns within seconds that the replica serving it died, not after the run's whole
   * timeout; the chaos run saw a chat wait 60 s). Every HOLDER_PROBE_MS it asks the holder's own
   * subjects something that is not a call (answered at once with bad_request while it lives):
   * NATS's "no responders" means its process or connection is gone. The call may have started
   * there, so it fails typed and retryable and is never sent elsewhere. A slow or lost probe is no
   * verdict (a busy holder, NATS reconnecting).
   */
  private watchHolder(holder: string): { died: Promise<never>; stop(): void } {
    const probe = wireSubject(sandboxInstanceSubject(holder, 'liveness'), this.config.DRAEL_NATS_PREFIX);
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const died = new Promise<never>((_, reject) => {
      const check = async () => {
        if (stopped) return;
        try {
          await this.stores.nc.request(probe, '', { timeout: HOLDER_PROBE_MS * 2 });
        } catch (err) {
          if (!stopped && isNoResponders(err)) {
            return reject(new SandboxError('unavailable', 'the replica holding this session stopped during the call; it may have run, retry', true, { reason: 'replica_lost' }));
          }
        }
        if (!stopped) timer = setTimeout(() => void check(), HOLDER_PROBE_MS);
      };
      timer = setTimeout(() => void check(), HOLDER_PROBE_MS);
    });
    // Nobody awaits `died` once the call has its answer.
    died.catch(() => undefined);
    return {
      died,
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  private envelopeOf(entry: RpcEntry) {
    let e = this.envelopes.get(entry.subject);
    if (!e) {
      e = replyEnvelope(entry.reply);
      this.envelopes.set(entry.subject, e);
    }
    return e;
  }

  /** This replica's per-replica subjects: the calls other replicas forward to it. */
  onApplicationBootstrap(): Promise<void> {
    if (this.subscription) return Promise.resolve();
    const root = wireSubject(sandboxInstanceSubject(this.stores.replicaId, ''), this.config.DRAEL_NATS_PREFIX);
    this.subscription = this.stores.nc.subscribe(`${root}>`, {
      callback: (err, msg) => {
        if (!err) void this.onForwarded(msg, msg.subject.slice(root.length));
      },
    });
    return this.stores.nc.flush();
  }

  private async onForwarded(msg: Msg, subject: string): Promise<void> {
    if (!msg.reply) return;
    const route = this.routes.get(subject);
    const respond = (envelope: unknown) => respondBounded(msg, JSON.stringify(envelope));
    if (!route) return void respond({ error: new SandboxError('bad_request', 'not a routed sandbox subject', false).toWire() });
    inFlight.enter();
    try {
      const requestId = acceptedRequestId(msg.headers?.get(REQUEST_ID_HEADER)) ?? newRequestId();
      await withRequestId(requestId, async () => {
        // As at every NATS edge (packages/nats-rpc): a large body's depth told before it is parsed.
        if (msg.data.length > DEPTH_PRESCAN_FROM_BYTES && jsonTextNestedDeeperThan(msg.data, MAX_JSON_DEPTH)) {
          return respond({ error: new SandboxError('bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted`, false).toWire() });
        }
        let body: unknown;
        try {
          body = msg.json<unknown>();
        } catch {
          return respond({ error: new SandboxError('bad_request', 'the body is not JSON', false).toWire() });
        }
        const parsed = route.entry.request.safeParse(body);
        if (!parsed.success) return respond({ error: badRequestOf(parsed.error).toWire() });
        try {
          respond({ result: await answering(() => this.answer(route, parsed.data, true)) });
        } catch (err) {
          if (err instanceof RpcError) return respond({ error: err.toWire() });
          this.logger.error({ err, subject }, 'forwarded call failed');
          respond({ error: new SandboxError('internal', 'internal error', true).toWire() });
        }
      });
    } finally {
      inFlight.leave();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    // Calls in flight were drained with the queue group's; no new forwarded call is taken.
    try {
      this.subscription?.unsubscribe();
    } catch {
      // the connection is already closed
    }
  }
}
