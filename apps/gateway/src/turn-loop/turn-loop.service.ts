import { asksForOneDocument } from '../openai/response-format.js';
import { Inject, Injectable } from '@nestjs/common';
import { MAX_JSON_DEPTH } from '@drael/contracts';
import { inSpan } from '@drael/tracing';
import type { ServerResponse } from 'node:http';
import type { Caller, KeyRecheck } from '../auth/identity.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { argumentsOf, ModelTurnEngine, unknownTool, type TurnInfo, type TurnOutcome } from '../engine/model-turn.engine.js';
import type { ToolCall } from '../engine/turn-stream.reader.js';
import { ApiError } from '../errors/api-error.js';
import { apiErrorOf } from '../errors/error-response.js';
import type { ResolvedModel } from '../models/model-registry.js';
import type { ChatCompletionRequest } from '../openai/chat-completion.schema.js';
import { SessionFilesService } from '../sessions/session-files.service.js';
import { Workspace } from '../sessions/workspace.js';
import { ToolCatalogue, type ServedCatalogue } from '../tools/catalogue.service.js';
import { cutText, failed, failureOf, renderResult, type ToolResult } from '../tools/tool-result.js';
import type { SubAgentAnswer, SubAgentFrame, SubAgentRunner, SubAgentSpec, ToolContext } from '../tools/server-tool.js';
import { measureToolCall, recordSpawnedAgent } from '../metrics/gateway.metrics.js';
import { ChatStreamWriter, type DraelFrame } from './chat-stream.writer.js';
import { CostMeter } from './cost-meter.js';
import { randomId } from '../ids.js';

/** Client parameters that belong to the client's own tool loop, or to the stream we write ourselves. */
// `store` and `metadata` stay here too: the loop makes several upstream calls per request (tool turns
// the client never sees), and an upstream that keeps stored completions (OpenAI's) would keep each
// hidden turn, tool results included, under the client's metadata, while no stored completion of
// Drael's answers to it. The client's own call is one completion only in proxy mode, which
// forwards both as sent. Everything else (user, safety_identifier, prompt_cache_key, sampling)
// goes on every turn.
const NOT_FORWARDED = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'functions',
  'function_call',
  'n',
  'store',
  'metadata',
]);
/** What a sub-agent inherits of its parent's sampling. */
const INHERITED = ['temperature', 'top_p'];

type Message = Record<string, unknown>;

export interface LoopRequest {
  readonly request: ChatCompletionRequest;
  readonly route: ResolvedModel;
  readonly caller: Caller;
  readonly session: string | undefined;
  readonly requestId: string;
  readonly res: ServerResponse;
  /**
   * Headers every answer of this request carries (x-request-id, the rate-limit headers), written
   * in the answer's one writeHead: separate setHeader calls put Node's writeHead on its slow path.
   * An error thrown before the answer started is written with it too (by the route).
   */
  readonly head: Record<string, string>;
  /** `x-drael-tool-events: 1`: stream each turn and tool call as a frame (streamed requests only). */
  readonly toolEvents?: boolean;
  /** The request's key, checked again as the loop goes (a revoked key stops it; sub-agents too). */
  readonly recheckKey?: KeyRecheck;
}

/** One chat loop: the request's own, or a sub-agent's inside it. */
interface ChatRun {
  readonly route: ResolvedModel;
  readonly baseBody: Record<string, unknown>;
  readonly messages: Message[];
  readonly catalogue: ServedCatalogue;
  readonly maxTurns?: number;
  readonly caller: Caller;
  readonly workspace: Workspace;
  readonly requestId: string;
  readonly signal: AbortSignal;
  readonly meter: CostMeter;
  readonly recheckKey?: KeyRecheck;
  /** The parent's text goes to the client as it comes; a child's stays inside. */
  readonly onText?: (text: string, logprobs?: readonly unknown[]) => void | Promise<void>;
  readonly onFrame?: (frame: DraelFrame) => void | Promise<void>;
  /** Turn and tool frames (x-drael-tool-events), the children's included, tagged with `agent`. */
  readonly onTrace?: (frame: DraelFrame) => void | Promise<void>;
  /** The sub-agent this loop is (its frames' `agent`); absent for the request's own loop. */
  readonly agent?: string;
  /** The parent names the deployment that served it in x-drael-upstream (while the head is unsent). */
  readonly onUpstream?: (deployment: string) => void;
  /**
   * The answer is one JSON document (`response_format` json_schema or json_object): only the last
   * turn's text is the answer, handed on when that turn ends. Text a turn says before its tool
   * calls would otherwise join the document and break it for every client that parses it.
   */
  readonly oneDocument?: boolean;
}

interface ChatResult {
  content: string;
  finishReason: string;
  /** The answer's token logprobs, when the client asked for them (the upstream then sent them). */
  logprobs?: unknown[];
}

class CostCeilingReached extends Error {}

/**
 * Catalogue mode's loop (spec 01 "The loop") on the model-turn engine: the catalogue is the
 * turn's tools, text streams to the client as one ordinary completion, tool calls run through
 * their adapters. The loop knows no tool by name: a tool that starts sub-agents (spawn_agent,
 * spec 04) is given the means to (ctx.subAgents) in the request's own loop.
 */
@Injectable()
export class TurnLoopService {
  constructor(
    private readonly engine: ModelTurnEngine,
    private readonly catalogue: ToolCatalogue,
    private readonly files: SessionFilesService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async handle(input: LoopRequest): Promise<void> {
    const { request, res } = input;
    // The model chooses among Drael's tools; a choice forced on it ("required", a named function)
    // would hold for every turn of the loop. Refused rather than dropped without a word.
    if (request.tool_choice !== undefined && request.tool_choice !== null && request.tool_choice !== 'auto') {
      throw new ApiError('invalid_request', 'tool_choice other than "auto" or "none" needs the request\'s own tools; with server-side tools the model chooses', 'tool_choice');
    }
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);

    const id = `chatcmpl-${randomId()}`;
    const created = Math.floor(Date.now() / 1000);
    const stream = request.stream === true;
    const writer = stream
      ? new ChatStreamWriter(res, { id, model: request.model, created, requestId: input.requestId, head: input.head, keepAliveMs: this.config.STREAM_KEEPALIVE_MS })
      : undefined;
    const meter = new CostMeter(this.config.DRAEL_REQUEST_COST_CEILING_USD, this.config.DRAEL_REQUEST_TOOL_CALLS);
    // Created by the sandbox at the first run_code; deleted below however the request ends.
    const workspace = Workspace.of(input.caller, input.session);

    try {
      const catalogue = await this.catalogue.served(input.caller, { subAgent: false });
      const result = await this.loop({
        route: input.route,
        baseBody: baseBodyOf(request),
        messages: request.messages,
        oneDocument: asksForOneDocument((request as Record<string, unknown>).response_format),
        catalogue,
        caller: input.caller,
        workspace,
        requestId: input.requestId,
        signal: abort.signal,
        meter,
        ...(input.recheckKey ? { recheckKey: input.recheckKey } : {}),
        onUpstream: (name: string) => {
          input.head['x-drael-upstream'] = name;
        },
        ...(writer ? { onText: (t: string, lp?: readonly unknown[]) => writer.text(t, lp), onFrame: (f: DraelFrame) => writer.frame(f) } : {}),
        ...(writer && input.toolEvents ? { onTrace: (f: DraelFrame) => writer.frame(f) } : {}),
      });
      if (abort.signal.aborted) return;
      if (writer) {
        await writer.finish(result.finishReason, request.stream_options?.include_usage === true ? meter.usage : undefined);
      } else {
        const { prompt_tokens, completion_tokens } = meter.usage;
        // The answer's JSON written around its variable parts (the id is hex, the numbers are
        // counts): the same bytes JSON.stringify gave of the object, without building it (issue 20).
        const body =
          `{"id":"${id}","object":"chat.completion","created":${created},"model":${JSON.stringify(request.model)},` +
          `"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(result.content)},"refusal":null},` +
          `"logprobs":${result.logprobs ? `{"content":${JSON.stringify(result.logprobs)}}` : 'null'},"finish_reason":${JSON.stringify(result.finishReason)}}],` +
          `"usage":{"prompt_tokens":${prompt_tokens},"completion_tokens":${completion_tokens},"total_tokens":${prompt_tokens + completion_tokens}}}`;
        const head: Record<string, string | number> = input.head;
        head['content-type'] = 'application/json';
        head['content-length'] = Buffer.byteLength(body);
        head['x-request-id'] = input.requestId;
        res.writeHead(200, head);
        res.end(body);
      }
    } catch (err) {
      if (abort.signal.aborted || res.destroyed) return;
      if (writer?.hasStarted) {
        writer.fail(apiErrorOf(err));
        return;
      }
      throw err;
    } finally {
      res.off('close', onClose);
      await this.files.discard(workspace, input.requestId);
    }
  }

  private async loop(run: ChatRun): Promise<ChatResult> {
    const messages = [...run.messages];
    let content = '';
    // The logprobs of the text in `content`, in order (the paragraph breaks between turns have none).
    let logprobs: unknown[] | undefined;
    // Text of a later turn starts on its own paragraph, so turns never run into each other.
    let separated = true;
    // The client's output limit bounds the answer's completion tokens over all its turns, as
    // OpenAI's bounds its one completion: each turn is sent what the earlier ones left of it (a
    // sub-agent's own max_tokens stays per turn, spec 04).
    const limit = run.agent ? undefined : outputLimitOf(run.baseBody);
    let generated = 0;
    const result = await this.engine.loop<ChatResult>(
      {
        request: async (turn: TurnInfo) => {
          // spec 04: a child stops once the request's spend reached its ceiling.
          if (run.agent && run.meter.reached) throw new CostCeilingReached();
          await run.onTrace?.({ event: 'turn_started', turn: turn.turn, ...agentOf(run) });
          separated = content === '';
          let options = run.baseBody;
          if (limit !== undefined && generated > 0) {
            const left = limit.tokens - generated;
            if (left <= 0) return { end: { content, finishReason: 'length', ...(logprobs ? { logprobs } : {}) } };
            options = { ...run.baseBody };
            for (const field of limit.fields) options[field] = left;
          }
          // The catalogue's tools go as its one serialised copy; the last turn has none (spec 01).
          const withTools = !turn.last && run.catalogue.definitions.length > 0;
          return { messages, options, ...(withTools ? { toolsJson: run.catalogue.definitionsJson } : {}) };
        },
        onText: (deltas, pieceLogprobs) => {
          // One document: the turn's text waits for its end (finished, below).
          if (run.oneDocument) return;
          const text = deltas.length === 1 ? deltas[0]! : deltas.join('');
          const piece = separated ? text : `\n\n${text}`;
          separated = true;
          content += piece;
          // One by one, not push(...): a whole answer's logprobs come in one call, and a spread of
          // 130,000 entries overflows the stack (a long answer with logprobs was a 500).
          if (pieceLogprobs) {
            logprobs ??= [];
            for (const entry of pieceLogprobs) logprobs.push(entry);
          }
          return pieceLogprobs ? run.onText?.(piece, pieceLogprobs) : run.onText?.(piece);
        },
        onAccepted: (deployment) => run.onUpstream?.(deployment.name),
        finished: async (outcome: TurnOutcome, turn: TurnInfo) => {
          // The turn costs what the deployment that served it charges.
          run.meter.add(outcome.deployment, outcome.usage);
          generated += outcome.usage.completion_tokens;
          if (outcome.toolCalls.length === 0 || turn.last) {
            // Never tool_calls for Drael's own tools: a tool call on the last turn is not served.
            const finishReason = outcome.finishReason && outcome.finishReason !== 'tool_calls' && outcome.finishReason !== 'function_call' ? outcome.finishReason : 'stop';
            if (run.oneDocument) {
              content = outcome.content;
              logprobs = outcome.logprobs;
              if (content !== '') await (logprobs ? run.onText?.(content, logprobs) : run.onText?.(content));
            }
            return { content, finishReason, ...(logprobs ? { logprobs } : {}) };
          }
          messages.push({ role: 'assistant', content: outcome.content === '' ? null : outcome.content, tool_calls: outcome.toolCalls });
          const ordinals = ordinalsOf(outcome.toolCalls);
          const results = await this.engine.runToolCalls(outcome.toolCalls, (call, i) => this.traced(call, run, i, ordinals[i]!, turn.turn));
          outcome.toolCalls.forEach((c, i) => messages.push({ role: 'tool', tool_call_id: c.id, content: results[i] }));
          return undefined;
        },
      },
      {
        route: run.route,
        requestId: run.requestId,
        signal: run.signal,
        ...(run.recheckKey ? { recheckKey: run.recheckKey } : {}),
        // issue 20: the upstream streams only when text goes to a client as it comes (a streamed
        // request's own loop); a non-streamed request and every sub-agent get one JSON answer per turn.
        stream: run.onText !== undefined,
        ...(run.agent ? {} : { countTurnsAs: 'catalogue' as const }),
        ...(run.maxTurns !== undefined ? { maxTurns: run.maxTurns } : {}),
      },
    );
    // Every chat turn answers on its last one (above): the engine never runs out of turns here.
    return result ?? { content, finishReason: 'stop' };
  }

  /** One tool call, its start and end streamed as frames when the request asked for them. */
  private async traced(call: ToolCall, run: ChatRun, index: number, ordinal: number, turn: number): Promise<string> {
    const name = call.function.name;
    const tool = run.catalogue.tools.get(name as never);
    if (!run.onTrace || tool?.ownFrames) return renderResult(await this.runTool(call, run, index, ordinal));
    const id = call.id || `call_${index}`;
    // The arguments as the model wrote them, cut like any field a tool answers with.
    await run.onTrace({ event: 'tool_started', id, tool: name, arguments: cutText(call.function.arguments).text, turn, ...agentOf(run) });
    const started = performance.now();
    const result = await this.runTool(call, run, index, ordinal);
    const text = renderResult(result);
    const ok = typeof result === 'string' || !(result.ok === false || 'error' in result);
    await run.onTrace({ event: 'tool_done', id, tool: name, ok, duration_ms: Math.round(performance.now() - started), result: text, ...agentOf(run) });
    return text;
  }

  private runTool(call: ToolCall, run: ChatRun, index: number, ordinal: number): Promise<ToolResult | string> {
    return measureToolCall(call.function.name, run.catalogue.tools.has(call.function.name as never), () => this.runToolUnmeasured(call, run, index, ordinal));
  }

  private async runToolUnmeasured(call: ToolCall, run: ChatRun, index: number, ordinal: number): Promise<ToolResult | string> {
    const tool = run.catalogue.tools.get(call.function.name as never);
    if (!tool) return unknownTool(call.function.name);
    if (!run.meter.takeToolCall()) {
      return failed('tool_call_limit_reached', `this request has made its ${run.meter.toolCallLimit} tool calls (its sub-agents' included); answer with what you have`);
    }
    const args = argumentsOf(call.function.arguments);
    if (args === undefined) return failed('invalid_arguments', `the arguments are not a JSON object (nested at most ${MAX_JSON_DEPTH} levels)`);
    try {
      // One span per tool call (names are the catalogue's, a bounded set); a service call it makes is its child.
      return await inSpan(`tool ${call.function.name}`, { attributes: { 'drael.tool': call.function.name } }, () => tool.run(args, this.contextOf(run, call, index, ordinal)));
    } catch (err) {
      if (run.signal.aborted) throw err;
      return failureOf(err);
    }
  }

  private contextOf(run: ChatRun, call: ToolCall, index: number, ordinal: number): ToolContext {
    return {
      caller: run.caller,
      workspace: run.workspace,
      requestId: run.requestId,
      signal: run.signal,
      callId: `${call.id || 'call'}:${index}:${randomId().slice(0, 8)}`,
      ordinal,
      // Only the request's own loop starts sub-agents (spec 04: children never spawn).
      ...(run.agent ? {} : { subAgents: new SubAgents(run, this.childRunner) }),
    };
  }

  /** runChild bound once, for every request's SubAgents. */
  private readonly childRunner = this.runChild.bind(this);

  /** How a tool of the request's own loop runs a child: its own loop and context, on the parent's alias (spec 04). */
  private async runChild(parent: ChatRun, child: SubAgentSpec): Promise<SubAgentAnswer> {
    try {
      const result = await this.loop({
        route: parent.route,
        baseBody: { ...pick(parent.baseBody, INHERITED), max_tokens: child.maxTokens },
        messages: [
          { role: 'system', content: child.brief },
          { role: 'user', content: child.task },
        ],
        catalogue: await this.catalogue.served(child.caller, { subAgent: true }),
        maxTurns: child.maxTurns,
        caller: child.caller,
        workspace: parent.workspace,
        requestId: parent.requestId,
        signal: parent.signal,
        meter: parent.meter,
        ...(parent.recheckKey ? { recheckKey: parent.recheckKey } : {}),
        agent: child.id,
        ...(parent.onTrace ? { onTrace: parent.onTrace } : {}),
      });
      if (result.content.trim() === '') return spawned({ ok: false, reason: 'failed' });
      return spawned({ ok: true, content: result.content });
    } catch (err) {
      if (parent.signal.aborted) throw err;
      return spawned({ ok: false, reason: err instanceof CostCeilingReached ? 'cost_ceiling' : 'failed' });
    }
  }
}

/**
 * The sub-agent runner every tool call of a request's own loop is handed. A class (its getter on
 * the prototype) rather than an object literal with a getter and two closures: the literal is
 * built on V8's slow path, once per tool call, and showed in the tool round's profile (issue 20).
 */
class SubAgents implements SubAgentRunner {
  constructor(
    private readonly parent: ChatRun,
    private readonly runChild: (parent: ChatRun, child: SubAgentSpec) => Promise<SubAgentAnswer>,
  ) {}

  get ceilingReached(): boolean {
    return this.parent.meter.reached;
  }

  async frame(frame: SubAgentFrame): Promise<void> {
    await this.parent.onFrame?.(frame);
  }

  run(child: SubAgentSpec): Promise<SubAgentAnswer> {
    return this.runChild(this.parent, child);
  }
}

const agentOf = (run: ChatRun): { agent?: string } => (run.agent ? { agent: run.agent } : {});

/** Each call's place among the turn's calls of the same tool (1 for the first). */
function ordinalsOf(calls: readonly ToolCall[]): number[] {
  const seen = new Map<string, number>();
  return calls.map((c) => {
    const n = (seen.get(c.function.name) ?? 0) + 1;
    seen.set(c.function.name, n);
    return n;
  });
}

function baseBodyOf(request: ChatCompletionRequest): Record<string, unknown> {
  // Copied key by key rather than spread and deleted: a deleted key leaves the object in V8's
  // slow dictionary mode, and each turn's JSON.stringify of it pays for that.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(request)) if (!NOT_FORWARDED.has(key)) out[key] = request[key];
  return out;
}

/** The client's output limit: the fewest tokens its max_tokens / max_completion_tokens allow, and the fields it gave. */
function outputLimitOf(body: Record<string, unknown>): { tokens: number; fields: string[] } | undefined {
  const fields = ['max_tokens', 'max_completion_tokens'].filter((f) => typeof body[f] === 'number');
  if (fields.length === 0) return undefined;
  return { tokens: Math.min(...fields.map((f) => body[f] as number)), fields };
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (obj[k] !== undefined && obj[k] !== null) out[k] = obj[k];
  return out;
}

/** Counts a child's outcome (drael_spawned_agents_total) and hands it on. */
function spawned(answer: SubAgentAnswer): SubAgentAnswer {
  recordSpawnedAgent(answer.ok ? 'ok' : answer.reason === 'cost_ceiling' ? 'ceiling' : 'failed');
  return answer;
}
