import { Injectable } from '@nestjs/common';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '@drael/contracts';
import { inSpan } from '@drael/tracing';
import type { KeyRecheck } from '../auth/identity.js';
import { recordTurns } from '../metrics/gateway.metrics.js';
import type { DeploymentConfig, MaxTokensParam } from '../models/model-routes.config.js';
import { withOutputLimitAs } from '../upstream/output-limit.js';
import { failed, type ToolResult } from '../tools/tool-result.js';
import type { ResolvedModel } from '../models/model-registry.js';
import { UpstreamClient } from '../upstream/upstream.client.js';
import { readJsonTurn, readTurnStream, turnOfText, type ToolCall, type ToolCallPiece, type TurnAnswer } from './turn-stream.reader.js';

// spec 01 "The loop": one request is bounded at six model turns (chat and Responses alike).
export const MAX_TURNS = 6;

// spec 01: on the last turn the server's tools are withdrawn and the model is told, in the
// conversation, to answer with what it has and to say plainly what it could not check.
export const FINAL_TURN_INSTRUCTION = 'Tools are no longer available for this request. Answer now with what you have, and say plainly what you could not check.';

/** Where a loop stands: `turn` counts from 1; the `last` turn runs without the server's tools. */
export interface TurnInfo {
  readonly turn: number;
  readonly last: boolean;
}

/** One turn's request: the conversation, and the rest of the body (tools, sampling, limits). */
export interface TurnRequest {
  readonly messages: readonly object[];
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * The turn's tools as a JSON array already serialised, sent as the body's `tools` in place of
   * `options.tools`: the catalogue's definitions are the same for every request of a tool level,
   * so they are serialised once, not once per turn (issue 20).
   */
  readonly toolsJson?: string;
}

/** A turn read to its end, with the deployment that served it (its prices are the turn's cost). */
export interface TurnOutcome extends TurnAnswer {
  readonly deployment: DeploymentConfig;
}

/** What a loop decides at each turn; everything else (the call, the limit, the final turn) is the engine's. */
export interface TurnPlan<R> {
  /** The turn's request, or `{ end }` to stop before calling (a spent budget). */
  request(turn: TurnInfo): TurnRequest | { readonly end: R } | Promise<TurnRequest | { readonly end: R }>;
  /** The turn's text as it streams: the deltas of one network read, in order, and their logprobs entries when the upstream sent any. */
  onText?(deltas: readonly string[], logprobs?: readonly unknown[]): void | Promise<void>;
  /** The turn's tool calls as they stream, piece by piece (a streamed answer only; the whole calls come to `finished` as ever); a promise holds the reading as onText's does. */
  onToolCall?(pieces: readonly ToolCallPiece[]): void | Promise<void>;
  /** A deployment accepted the turn's call (before any of its text). */
  onAccepted?(deployment: DeploymentConfig, turn: TurnInfo): void;
  /** The turn, read: an answer ends the loop, undefined goes on to the next turn. */
  finished(outcome: TurnOutcome, turn: TurnInfo): R | undefined | Promise<R | undefined>;
}

export interface LoopOptions {
  readonly route: ResolvedModel;
  readonly requestId: string;
  readonly signal: AbortSignal;
  /** Turns this loop may take (MAX_TURNS unless a sub-agent's role says fewer). */
  readonly maxTurns?: number;
  /**
   * Ask the upstream for a stream: only when text must reach a client as it comes (issue 20: a
   * client that does not stream, and a sub-agent, get the same turn as one JSON answer). Both
   * loops decide it by this one rule.
   */
  readonly stream: boolean;
  /**
   * The request's own loop counts its turns in `drael_gateway_turns_per_request` under this mode
   * (a sub-agent's loop has none: its turns are not a request's).
   */
  readonly countTurnsAs?: 'catalogue' | 'responses';
  /**
   * The request's key, checked again before every turn after the first and before a turn's tool
   * calls run: a key revoked mid-request spends nothing more (no model call, no paid tool).
   */
  readonly recheckKey?: KeyRecheck;
}

/**
 * The model-turn engine both server-side loops run on (chat completions' catalogue mode and the
 * Responses API): the turn limit and the final-turn rule, the one upstream call per turn (routed,
 * retried before acceptance; streamed only when text must flow), the one reader of each answer
 * form and their error translation, and the
 * calls of a turn run in parallel with their results in call order. A loop supplies only what
 * differs: its messages and tools, what it writes to its client, its tools' execution.
 *
 * Hooks for metrics and tracing: `call` is the one place per upstream call, `loop` per turn,
 * `runToolCalls` per tool call.
 */
@Injectable()
export class ModelTurnEngine {
  constructor(private readonly upstream: UpstreamClient) {}

  /** Runs turns until the plan answers; undefined when the last turn still asked for more. */
  async loop<R>(plan: TurnPlan<R>, options: LoopOptions): Promise<R | undefined> {
    const maxTurns = options.maxTurns ?? MAX_TURNS;
    // Turns that called the upstream (a turn the plan ends before calling is not one).
    let called = 0;
    for (let turn = 1; turn <= maxTurns; turn++) {
      const info: TurnInfo = { turn, last: turn === maxTurns };
      // One span per turn (both loops): its upstream call and its tool calls are its children.
      const step = await inSpan('turn', { attributes: { 'drael.turn': turn } }, async (): Promise<{ done: R } | undefined> => {
        if (turn > 1) await options.recheckKey?.();
        const request = await plan.request(info);
        if ('end' in request) return { done: request.end };
        called = turn;
        const outcome = await this.call(options, withFinalInstruction(request, info), plan, info);
        if (outcome.toolCalls.length > 0 && !info.last) await options.recheckKey?.();
        const result = await plan.finished(outcome, info);
        return result === undefined ? undefined : { done: result };
      });
      if (step) {
        countTurns(options, called);
        return step.done;
      }
    }
    countTurns(options, called);
    return undefined;
  }

  /** The calls of one turn, in parallel; results in call order. `run` answers undefined for a call the platform does not execute. */
  runToolCalls<T>(calls: readonly ToolCall[], run: (call: ToolCall, index: number) => Promise<T> | undefined): Promise<Array<T | undefined>> {
    return Promise.all(calls.map((call, index) => run(call, index) ?? Promise.resolve(undefined)));
  }

  /** One turn's upstream call: the alias's router picks the deployment and retries before acceptance. */
  private async call<R>(options: LoopOptions, request: TurnRequest, plan: TurnPlan<R>, turn: TurnInfo): Promise<TurnOutcome> {
    const call = {
      path: '/chat/completions',
      bodyFor: turnBodyFor(request, options.stream),
      requestId: options.requestId,
      signal: options.signal,
      accept: options.stream ? 'text/event-stream' : 'application/json',
    };
    const onText = plan.onText?.bind(plan);
    let answer: TurnAnswer;
    let deployment: DeploymentConfig;
    if (options.stream) {
      const res = await this.upstream.post(options.route, call);
      deployment = res.deployment;
      plan.onAccepted?.(deployment, turn);
      // A server that ignores `stream: true` answers one JSON object: read as such, not as an empty stream.
      const json = /^application\/json\b/i.test(String(res.headers['content-type'] ?? ''));
      answer = json
        ? await readJsonTurn(res.body, options.signal, onText)
        : await readTurnStream(res.body, options.signal, onText, this.upstream.answerIdleMs(deployment), plan.onToolCall?.bind(plan));
    } else {
      // The whole answer on the raw dispatch (issue 20: no Readable and no promise per chunk).
      const whole = await this.upstream.read(options.route, call, (d) => plan.onAccepted?.(d, turn));
      deployment = whole.deployment;
      answer = await turnOfText(whole.text, options.signal, onText);
    }
    this.upstream.recordUsage(deployment, answer.usage);
    return { ...answer, deployment };
  }
}

/**
 * The upstream body of one turn, for each deployment's model name: everything but the model is
 * serialised once per turn (a retry on another deployment re-uses it; one that takes the output
 * limit under another name, its max_tokens_param, gets its own copy once), and pre-serialised
 * tools are put in as they are. The model always comes from the deployment, never from the options.
 */
export function turnBodyFor(request: TurnRequest, stream: boolean): (upstreamModel: string, deployment?: DeploymentConfig) => string {
  // Copied without `model` (and `tools` when they come serialised) rather than spread and deleted:
  // a deleted key puts the object in V8's slow dictionary mode, which JSON.stringify pays for.
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(request.options)) if (key !== 'model' && !(key === 'tools' && request.toolsJson !== undefined)) fields[key] = request.options[key];
  fields.messages = request.messages;
  fields.stream = stream;
  if (stream) fields.stream_options = { include_usage: true };
  // `fields` always holds messages, so its JSON is `{"messages":…}` and what follows its `{` is a member list.
  const rest = JSON.stringify(fields).slice(1);
  // A deployment that takes the output limit under another name gets its own copy, made once a turn.
  const renamed: Partial<Record<MaxTokensParam, string>> = {};
  const restFor = (param: MaxTokensParam | undefined): string => {
    const limited = withOutputLimitAs(fields, param);
    if (limited === fields) return rest;
    return (renamed[param!] ??= JSON.stringify(limited).slice(1));
  };
  const tools = request.toolsJson !== undefined ? `"tools":${request.toolsJson},` : '';
  return (upstreamModel, deployment) => `{"model":${JSON.stringify(upstreamModel)},${tools}${restFor(deployment?.max_tokens_param)}`;
}

/** A request's loop ended (answered, stopped or out of turns) after `turns` model turns; a failed loop is not counted. */
function countTurns(options: LoopOptions, turns: number): void {
  if (options.countTurnsAs && turns > 0) recordTurns(options.countTurnsAs, turns);
}

/** The final-turn rule: after a first turn, the last one carries the instruction to answer now. */
function withFinalInstruction(request: TurnRequest, turn: TurnInfo): TurnRequest {
  if (!turn.last || turn.turn === 1) return request;
  return { ...request, messages: [...request.messages, { role: 'user', content: FINAL_TURN_INSTRUCTION }] };
}

/**
 * The model's JSON arguments as an object, or undefined when they are not a JSON object ('' counts
 * as {}) or are nested deeper than MAX_JSON_DEPTH: arguments are kept in output items, cloned and
 * serialised, each a recursion as deep as the JSON (5,000 nested levels, 10 KB, overflowed the
 * stack: a 500 after the model was paid). No tool takes arguments anywhere near that deep.
 */
export function argumentsOf(text: string): Record<string, unknown> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text === '' ? '{}' : text);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v) || nestedDeeperThan(v, MAX_JSON_DEPTH)) return undefined;
  return v as Record<string, unknown>;
}

/** A call to a tool the request does not have: the model is told, the loop goes on (both loops). */
export function unknownTool(name: string): ToolResult {
  return failed('unknown_tool', `no tool named ${JSON.stringify(name)} is available to this request; it did not run`);
}
