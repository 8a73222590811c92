import type { DeploymentConfig } from '../models/model-routes.config.js';

/** Why a deployment failed an attempt; the router's rules (retry, cool) read only this. */
export const FAILURE_KINDS = ['connect', 'timeout', 'rate_limited', 'server_error', 'context_length', 'client_error'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** What every replica knows of a deployment's health (mirrored from Redis). */
export interface CooldownState {
  /** Epoch ms the cooldown ends; after it the deployment is probed (one success brings it back). */
  readonly until: number;
  readonly reason: FailureKind;
}

/**
 * Requests (or tokens) over a sliding minute in one-second buckets: the per-deployment rpm/tpm
 * limits (spec'd per replica, README "Model routing"). Only deployments that set a limit pay for it.
 */
export class MinuteWindow {
  private readonly counts = new Float64Array(60);
  private readonly seconds = new Float64Array(60).fill(-1);

  add(n: number, now: number): void {
    const sec = Math.floor(now / 1000);
    const i = sec % 60;
    if (this.seconds[i] !== sec) {
      this.seconds[i] = sec;
      this.counts[i] = 0;
    }
    this.counts[i]! += n;
  }

  total(now: number): number {
    const oldest = Math.floor(now / 1000) - 59;
    let sum = 0;
    for (let i = 0; i < 60; i++) if (this.seconds[i]! >= oldest) sum += this.counts[i]!;
    return sum;
  }

  /** Milliseconds until the oldest counted second leaves the window (when room appears next). */
  msUntilRoom(now: number): number {
    const oldest = Math.floor(now / 1000) - 59;
    let first = Infinity;
    for (let i = 0; i < 60; i++) if (this.seconds[i]! >= oldest && this.counts[i]! > 0) first = Math.min(first, this.seconds[i]!);
    return first === Infinity ? 0 : Math.max(1, (first + 60) * 1000 - now);
  }
}

/** One deployment with this replica's live view of it: load, limits used, health. */
export class Deployment {
  /** Requests of this replica in flight on it (the least_busy strategy). */
  inFlight = 0;
  cooldown: CooldownState | undefined;
  /** Failures in a row seen by this replica (cooling when Redis is unreachable). */
  localFailures = 0;
  readonly requests?: MinuteWindow;
  readonly tokens?: MinuteWindow;
  readonly stats = { attempts: 0, successes: 0, failures: {} as Partial<Record<FailureKind, number>>, cooldowns: 0, prompt_tokens: 0, completion_tokens: 0 };

  constructor(readonly config: DeploymentConfig) {
    if (config.rpm !== undefined) this.requests = new MinuteWindow();
    if (config.tpm !== undefined) this.tokens = new MinuteWindow();
  }

  get name(): string {
    return this.config.name;
  }

  isCooling(now: number): boolean {
    return this.cooldown !== undefined && now < this.cooldown.until;
  }

  /** At its rpm or tpm limit on this replica: skipped, never hit. */
  atLimit(now: number): boolean {
    const { rpm, tpm } = this.config;
    if (rpm !== undefined && this.requests!.total(now) >= rpm) return true;
    if (tpm !== undefined && this.tokens!.total(now) >= tpm) return true;
    return false;
  }

  msUntilRoom(now: number): number {
    return Math.max(this.requests?.msUntilRoom(now) ?? 0, this.tokens?.msUntilRoom(now) ?? 0);
  }

  state(now: number): 'healthy' | 'cooling' | 'probing' {
    if (!this.cooldown) return 'healthy';
    return now < this.cooldown.until ? 'cooling' : 'probing';
  }
}
