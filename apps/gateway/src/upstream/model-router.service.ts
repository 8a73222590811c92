import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import { ModelRegistry, type ResolvedModel } from '../models/model-registry.js';
import type { DeploymentConfig } from '../models/model-routes.config.js';
import { CooldownStore } from './cooldown.store.js';
import type { DeploymentReport } from './deployment-report.schema.js';
import { chooseDeployment, msUntilRoom } from './deployment-chooser.js';
import { Deployment } from './deployment.js';
import { isRetryable, type AttemptFailure } from './upstream-failure.js';
import { upstreamMetrics } from '../metrics/gateway.metrics.js';

/** A deployment's state as /readyz shows it (never its key or URL). */
export type { DeploymentReport };

/** At most one log line per deployment this often with what its upstream said (logDetail). */
const DETAIL_LOG_INTERVAL_MS = 10_000;

/**
 * The alias's deployments and their shared health (README "Model routing"): hands each request a
 * RoutePlan, which picks a deployment per attempt and decides whether a failed attempt is
 * retried. UpstreamClient is its only user, so every mode (proxy, turn loop, Responses,
 * inference for agent runs) routes by the same rules.
 */
@Injectable()
export class ModelRouter implements OnModuleInit, OnApplicationShutdown {
  private readonly byAlias = new Map<string, Deployment[]>();
  private readonly store: CooldownStore;
  private readonly logger = new Logger('router');

  constructor(
    private readonly models: ModelRegistry,
    @Inject(GATEWAY_CONFIG) readonly config: GatewayConfig,
  ) {
    for (const route of models.all())
      this.byAlias.set(
        route.alias,
        route.deployments.map((d) => new Deployment(d)),
      );
    this.store = new CooldownStore(
      [...this.byAlias.values()].flat(),
      {
        redisUrl: config.REDIS_URL,
        keyPrefix: config.ROUTER_KEY_PREFIX ?? `drael:router:${config.DRAEL_NATS_PREFIX}:`,
        failuresToCool: config.ROUTER_FAILURES_TO_COOL,
        failureWindowMs: config.ROUTER_FAILURE_WINDOW_MS,
        cooldownMs: config.ROUTER_COOLDOWN_MS,
        maxCooldownMs: config.ROUTER_MAX_COOLDOWN_MS,
        syncMs: config.ROUTER_SYNC_MS,
      },
      (message) => this.logger.warn(message),
    );
  }

  onModuleInit(): Promise<void> {
    return this.store.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.store.stop();
  }

  plan(route: ResolvedModel): RoutePlan {
    return new RoutePlan(this, route);
  }

  deploymentsOf(alias: string): Deployment[] {
    return this.byAlias.get(alias) ?? [];
  }

  resolve(alias: string): ResolvedModel {
    return this.models.resolve(alias);
  }

  recordFailure(d: Deployment, failure: AttemptFailure): void {
    d.stats.failures[failure.kind] = (d.stats.failures[failure.kind] ?? 0) + 1;
    if (failure.detail !== undefined) this.logDetail(d, failure);
    // A 4xx other than 429 is the request's fault, not the deployment's.
    if (isRetryable(failure.kind)) this.store.recordFailure(d, failure.kind, failure.retryAfterMs);
  }

  /** When each deployment's refusal was last logged: at most one line per deployment per DETAIL_LOG_INTERVAL_MS. */
  private readonly detailLoggedAt = new Map<string, number>();

  /**
   * The upstream's own words for a refusal the client was answered in Drael's (upstream-failure.ts),
   * for the operator: what a 500 or 429 said is where the fault is found. Throttled per deployment,
   * so an upstream's outage under load is a line every few seconds, not one per request.
   */
  private logDetail(d: Deployment, failure: AttemptFailure): void {
    const now = Date.now();
    if (now - (this.detailLoggedAt.get(d.name) ?? -Infinity) < DETAIL_LOG_INTERVAL_MS) return;
    this.detailLoggedAt.set(d.name, now);
    this.logger.warn(`deployment ${d.name} refused a request (${failure.kind}, answered as ${failure.error.code}): ${JSON.stringify(failure.detail)}`);
  }

  recordSuccess(d: Deployment): void {
    d.stats.successes++;
    this.store.recordSuccess(d);
  }

  /** Tokens an answer reported, for the deployment's tpm window and its figures. */
  recordUsage(name: string, alias: string, usage: { prompt_tokens: number; completion_tokens: number }): void {
    const d = this.deploymentsOf(alias).find((x) => x.name === name);
    if (!d) return;
    d.stats.prompt_tokens += usage.prompt_tokens;
    d.stats.completion_tokens += usage.completion_tokens;
    upstreamMetrics.usage(alias, name, usage, d.config);
    // The prompt was counted (estimated) when the attempt started.
    d.tokens?.add(usage.completion_tokens, Date.now());
  }

  report(): Record<string, DeploymentReport> {
    const now = Date.now();
    const out: Record<string, DeploymentReport> = {};
    for (const list of this.byAlias.values()) {
      for (const d of list) {
        const state = d.state(now);
        out[d.name] = {
          alias: d.config.alias,
          priority: d.config.priority,
          weight: d.config.weight,
          state,
          ...(d.cooldown ? { cooling_until: new Date(d.cooldown.until).toISOString(), reason: d.cooldown.reason } : {}),
          in_flight: d.inFlight,
          attempts: d.stats.attempts,
          successes: d.stats.successes,
          failures: { ...d.stats.failures },
          cooldowns: d.stats.cooldowns,
          prompt_tokens: d.stats.prompt_tokens,
          completion_tokens: d.stats.completion_tokens,
        };
      }
    }
    return out;
  }
}

/**
 * One request's way through an alias's deployments. Attempts are bounded (max_attempts or
 * ROUTER_MAX_ATTEMPTS) and no retry starts after ROUTER_DEADLINE_MS; each deployment is tried at
 * most once; a context_length_exceeded moves once to the alias's context_fallback.
 */
export class RoutePlan {
  private deployments: Deployment[];
  private tried: Deployment[] | undefined;
  private attempts = 0;
  private fellBack = false;
  private last: AttemptFailure | undefined;
  private startedAt = 0;
  private attemptStartedAt = 0;
  private readonly maxAttempts: number;

  constructor(
    private readonly router: ModelRouter,
    private route: ResolvedModel,
  ) {
    this.deployments = router.deploymentsOf(route.alias);
    this.maxAttempts = route.max_attempts ?? router.config.ROUTER_MAX_ATTEMPTS;
  }

  /** The alias being served (the context fallback's after a move). */
  get alias(): string {
    return this.route.alias;
  }

  /** The deployment for the next attempt; throws the error the client gets when there is none. */
  next(): Deployment {
    const now = Date.now();
    const d = chooseDeployment(this.deployments, this.tried, this.route.strategy, now);
    if (!d) {
      if (this.last) throw this.last.error;
      const ms = msUntilRoom(this.deployments, now);
      const error = new ApiError('upstream_rate_limited', `Every upstream of the model '${this.route.alias}' is at its configured request limit; retry later.`);
      error.headers = { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) };
      throw error;
    }
    if (this.attempts++ === 0) this.startedAt = now;
    (this.tried ??= []).push(d);
    d.inFlight++;
    d.stats.attempts++;
    this.attemptStartedAt = performance.now();
    upstreamMetrics.attempt(this.route.alias, d.name);
    d.requests?.add(1, now);
    return d;
  }

  /** The body for `d` (its own model name); a tpm limit counts the prompt, roughly, as it leaves. */
  bodyOf(d: Deployment, call: { readonly bodyFor: (upstreamModel: string, deployment: DeploymentConfig) => string | Buffer }): string | Buffer {
    const body = call.bodyFor(d.config.model, d.config);
    // About 4 bytes a token; the answer's own count of completion tokens follows where it is read.
    d.tokens?.add(body.length >> 2, Date.now());
    return body;
  }

  /**
   * The headers timeout of an attempt: the deployment's; a retry's is cut to what the deadline
   * leaves. Undefined: the pool's own (UPSTREAM_HEADERS_TIMEOUT_MS), nothing to set per request.
   */
  headersTimeout(d: Deployment): number | undefined {
    const own = d.config.headers_timeout_ms;
    if (this.attempts <= 1) return own;
    const left = this.router.config.ROUTER_DEADLINE_MS - (Date.now() - this.startedAt);
    return Math.max(100, Math.min(own ?? this.router.config.UPSTREAM_HEADERS_TIMEOUT_MS, left));
  }

  /** The deployment's body timeout, or undefined for the pool's own (UPSTREAM_BODY_TIMEOUT_MS). */
  bodyTimeout(d: Deployment): number | undefined {
    return d.config.body_timeout_ms;
  }

  /** The attempt on `d` is over (answered, failed or aborted). */
  end(d: Deployment): void {
    d.inFlight--;
    upstreamMetrics.ended(d.config.alias, d.name, performance.now() - this.attemptStartedAt);
  }

  succeeded(d: Deployment): void {
    this.router.recordSuccess(d);
    upstreamMetrics.firstByte(d.config.alias, d.name, performance.now() - this.attemptStartedAt);
  }

  /**
   * Records a failed attempt (no byte of it reached the client) and says whether to make another.
   * The caller then asks next(), which throws this failure's error when no deployment is left.
   */
  failed(d: Deployment, failure: AttemptFailure): boolean {
    this.router.recordFailure(d, failure);
    upstreamMetrics.failure(d.config.alias, d.name, failure.kind);
    // The deployment that answered last is named on the error the client may get (never its key or URL).
    failure.error.headers = { ...failure.error.headers, 'x-drael-upstream': d.name };
    this.last = failure;
    if (failure.kind === 'context_length') {
      const fallback = this.route.context_fallback;
      if (fallback === undefined || this.fellBack) return false;
      this.fellBack = true;
      this.route = this.router.resolve(fallback);
      this.deployments = this.router.deploymentsOf(fallback);
      this.tried = undefined;
      return this.attempts < this.maxAttempts + 1;
    }
    if (!isRetryable(failure.kind)) return false;
    return this.attempts < this.maxAttempts && Date.now() - this.startedAt < this.router.config.ROUTER_DEADLINE_MS;
  }
}
