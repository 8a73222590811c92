import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { inSpan } from '@drael/tracing';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import type { ResolvedModel } from '../models/model-registry.js';
import type { ChatCompletionRequest } from '../openai/chat-completion.schema.js';
import { UpstreamClient } from '../upstream/upstream.client.js';
import { SessionFilesService } from '../sessions/session-files.service.js';
import { Workspace } from '../sessions/workspace.js';
import { ToolCatalogue, type ServedCatalogue } from '../tools/catalogue.service.js';
import { INVALID_ARGUMENTS, SUB_AGENT_ROLES } from '../tools/spawn-agent.tool.js';
import { lowerLevel } from '../tools/tool-levels.js';
import { cutText, failed, failureOf, renderResult, type ToolResult } from '../tools/tool-result.js';
import type { Caller, ToolContext } from '../tools/server-tool.js';
import { ChatStreamWriter, type DraelFrame } from './chat-stream.writer.js';
import { CostMeter } from './cost-meter.js';
import { streamTurn, type UpstreamToolCall } from './upstream-turn.js';

// spec 01 "The loop": one request is bounded at six model turns.
export const MAX_TURNS = 6;
// spec 04: at most 4 spawn_agent calls run per turn.
export const MAX_SPAWNS_PER_TURN = 4;
// spec 04: children run with max_tokens 4096.
export const CHILD_MAX_TOKENS = 4096;
// How much of a child's answer a progress frame previews.
const PREVIEW_CHARS = 200;

// spec 01: on the last turn the catalogue is withdrawn and the model is told, in the conversation,
// to answer with what it has and to say plainly what it could not check.
export const FINAL_TURN_INSTRUCTION =
  'Tools are no longer available for this request. Answer now with what you have, and say plainly what you could not check.';

/** Client parameters that belong to the client's own tool loop, or to the stream we write ourselves. */
const NOT_FORWARDED = ['model', 'messages', 'stream', 'stream_options', 'tools', 'tool_choice', 'parallel_tool_calls', 'functions', 'function_call', 'n'];

type Message = Record<string, unknown>;

export interface LoopRequest {
  readonly request: ChatCompletionRequest;
  readonly route: ResolvedModel;
  readonly caller: Caller;
  readonly session: string | undefined;
  readonly requestId: string;
  readonly res: ServerResponse;
  /** `x-drael-tool-events: 1`: stream each turn and tool call as a frame (streamed requests only). */
  readonly toolEvents?: boolean;
}

interface LoopRun {
  readonly route: ResolvedModel;
  readonly baseBody: Record<string, unknown>;
  readonly messages: Message[];
  readonly catalogue: ServedCatalogue;
  readonly maxTurns: number;
  readonly caller: Caller;
  readonly workspace: Workspace;
  readonly requestId: string;
  readonly signal: AbortSignal;
  readonly meter: CostMeter;
  /** The parent's text goes to the client as it comes; a child's stays inside. */
  readonly onText?: (text: string) => Promise<void>;
  readonly onFrame?: (frame: DraelFrame) => Promise<void>;
  /** Turn and tool frames (x-drael-tool-events), the children's included, tagged with `agent`. */
  readonly onTrace?: (frame: DraelFrame) => Promise<void>;
  /** The sub-agent this loop is (its frames' `agent`); absent for the request's own loop. */
  readonly agent?: string;
  /** The parent names the deployment that served it in x-drael-upstream (while the head is unsent). */
  readonly onUpstream?: (deployment: string) => void;
  /** Only the parent may spawn. */
  readonly canSpawn: boolean;
}

interface LoopResult {
  content: string;
  finishReason: string;
}

/** What a loop carries from one turn to the next: the conversation, and the text answered so far. */
interface LoopState {
  readonly messages: Message[];
  content: string;
}

class CostCeilingReached extends Error {}

/**
 * The server-side turn loop (spec 01 "The loop", spec 04 spawn_agent): at most six model turns;
 * the calls of one turn run in parallel and their results return in call order; the sixth turn
 * runs without the catalogue. The client sees one ordinary completion or stream.
 */
@Injectable()
export class TurnLoopService {
  constructor(
    private readonly upstream: UpstreamClient,
    private readonly catalogue: ToolCatalogue,
    private readonly files: SessionFilesService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async handle(input: LoopRequest): Promise<void> {
    const { request, res } = input;
    if ((request.n ?? 1) > 1) {
      throw new ApiError('invalid_request', 'n > 1 is not served with server-side tools; send x-drael-server-tools: 0 for a plain completion', 'n');
    }
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);

    const id = `chatcmpl-${randomBytes(12).toString('base64url')}`;
    const created = Math.floor(Date.now() / 1000);
    const stream = request.stream === true;
    const writer = stream ? new ChatStreamWriter(res, { id, model: request.model, created, requestId: input.requestId }) : undefined;
    const meter = new CostMeter(this.config.DRAEL_REQUEST_COST_CEILING_USD);
    // Created by the sandbox at the first run_code; deleted below however the request ends.
    const workspace = Workspace.of(input.caller, input.session);

    try {
      const catalogue = await this.catalogue.served(input.caller, { subAgent: false });
      const result = await this.loop({
        route: input.route,
        baseBody: baseBodyOf(request),
        messages: request.messages,
        catalogue,
        maxTurns: MAX_TURNS,
        caller: input.caller,
        workspace,
        requestId: input.requestId,
        signal: abort.signal,
        meter,
        canSpawn: true,
        onUpstream: (name: string) => {
          if (!res.headersSent) res.setHeader('x-drael-upstream', name);
        },
        ...(writer ? { onText: (t: string) => writer.text(t), onFrame: (f: DraelFrame) => writer.frame(f) } : {}),
        ...(writer && input.toolEvents ? { onTrace: (f: DraelFrame) => writer.frame(f) } : {}),
      });
      if (abort.signal.aborted) return;
      if (writer) {
        await writer.finish(result.finishReason, request.stream_options?.include_usage === true ? meter.usage : undefined);
      } else {
        const body = JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: request.model,
          choices: [{ index: 0, message: { role: 'assistant', content: result.content, refusal: null }, logprobs: null, finish_reason: result.finishReason }],
          usage: { ...meter.usage, total_tokens: meter.usage.prompt_tokens + meter.usage.completion_tokens },
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': input.requestId });
        res.end(body);
      }
    } catch (err) {
      if (abort.signal.aborted || res.destroyed) return;
      if (writer?.hasStarted) {
        writer.fail(err instanceof ApiError ? err : ApiError.fromRpc(err) ?? new ApiError('internal', 'The turn loop failed'));
        return;
      }
      throw err;
    } finally {
      res.off('close', onClose);
      await this.files.discard(workspace, input.requestId);
    }
  }

  private async loop(run: LoopRun): Promise<LoopResult> {
    const state: LoopState = { messages: [...run.messages], content: '' };
    for (let turn = 1; ; turn++) {
      // One span per turn: its upstream call and tool calls are its children.
      const done = await inSpan('turn', { attributes: { 'drael.turn': turn, 'drael.agent': run.agent } }, () => this.turn(run, state, turn));
      if (done) return done;
    }
  }

  /** One model turn and its tool calls; the loop's result once the model answers without tools (or on the last turn). */
  private async turn(run: LoopRun, state: LoopState, turn: number): Promise<LoopResult | undefined> {
    const { messages } = state;
    const last = turn >= run.maxTurns;
    const tools = last ? [] : run.catalogue.definitions;
    const body: Record<string, unknown> = {
      ...run.baseBody,
      messages: last && turn > 1 ? [...messages, { role: 'user', content: FINAL_TURN_INSTRUCTION }] : messages,
      stream: true,
      stream_options: { include_usage: true },
      ...(tools.length > 0 ? { tools } : {}),
    };
    if (!run.canSpawn && run.meter.reached) throw new CostCeilingReached();
    await run.onTrace?.({ event: 'turn_started', turn, ...agentOf(run) });

    // Text of a later turn starts on its own paragraph, so turns never run into each other.
    let separated = state.content === '';
    const onText = async (text: string) => {
      const piece = separated ? text : `\n\n${text}`;
      separated = true;
      state.content += piece;
      await run.onText?.(piece);
    };
    const outcome = await streamTurn(this.upstream, run.route, body, { requestId: run.requestId, signal: run.signal, onText, onUpstream: run.onUpstream });
    // The turn costs what the deployment that served it charges.
    run.meter.add(outcome.deployment, outcome.usage);

    if (outcome.toolCalls.length === 0 || last) {
      // Never tool_calls for Drael's own tools: a tool call on the last turn is not served.
      const finishReason = outcome.finishReason && outcome.finishReason !== 'tool_calls' && outcome.finishReason !== 'function_call' ? outcome.finishReason : 'stop';
      return { content: state.content, finishReason };
    }
    messages.push({
      role: 'assistant',
      content: outcome.content === '' ? null : outcome.content,
      tool_calls: outcome.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    });
    const results = await this.runCalls(outcome.toolCalls, run, turn);
    outcome.toolCalls.forEach((c, i) => messages.push({ role: 'tool', tool_call_id: c.id, content: results[i] }));
    return undefined;
  }

  /** The calls of one turn, in parallel; results in call order. */
  private runCalls(calls: UpstreamToolCall[], run: LoopRun, turn: number): Promise<string[]> {
    let spawns = 0;
    return Promise.all(
      calls.map((call, i) => {
        if (call.name === 'spawn_agent' && run.canSpawn && run.catalogue.tools.has('spawn_agent')) {
          spawns++;
          // spec 04: calls past the cap receive {"error":"delegation_fanout_capped"}.
          if (spawns > MAX_SPAWNS_PER_TURN) return Promise.resolve(JSON.stringify({ error: 'delegation_fanout_capped' }));
          return this.spawn(call, run);
        }
        return this.traced(call, run, i, turn);
      }),
    );
  }

  /** One tool call, its start and end streamed as frames when the request asked for them. */
  private async traced(call: UpstreamToolCall, run: LoopRun, index: number, turn: number): Promise<string> {
    if (!run.onTrace) return renderResult(await this.runTool(call, run, index));
    const id = call.id || `call_${index}`;
    // The arguments as the model wrote them, cut like any field a tool answers with.
    await run.onTrace({ event: 'tool_started', id, tool: call.name, arguments: cutText(call.arguments).text, turn, ...agentOf(run) });
    const started = performance.now();
    const result = await this.runTool(call, run, index);
    const text = renderResult(result);
    const ok = !(result.ok === false || 'error' in result);
    await run.onTrace({ event: 'tool_done', id, tool: call.name, ok, duration_ms: Math.round(performance.now() - started), result: text, ...agentOf(run) });
    return text;
  }

  private async runTool(call: UpstreamToolCall, run: LoopRun, index: number): Promise<ToolResult> {
    const tool = run.catalogue.tools.get(call.name as never);
    if (!tool) {
      if (call.name === 'spawn_agent' && !run.canSpawn) return { error: 'spawn_refused', why: 'a sub-agent cannot start sub-agents; do the task yourself' };
      return failed('unknown_tool', `no tool named ${JSON.stringify(call.name)} is available to this request; it did not run`);
    }
    const args = parseJson(call.arguments);
    if (args === undefined) return failed('invalid_arguments', 'the arguments are not a JSON object');
    try {
      // One span per tool call (names are the catalogue's, a bounded set); a service call it makes is its child.
      return await inSpan(`tool ${call.name}`, { attributes: { 'drael.tool': call.name } }, () => tool.run(args, this.contextOf(run, call, index)));
    } catch (err) {
      if (run.signal.aborted) throw err;
      return failureOf(err);
    }
  }

  /** spawn_agent: a child with its own loop and context, on the parent's alias (spec 04). */
  private async spawn(call: UpstreamToolCall, run: LoopRun): Promise<string> {
    const parsed = this.catalogue.spawnAgent.parse(parseJson(call.arguments), run.caller);
    if (!parsed) return JSON.stringify(INVALID_ARGUMENTS);
    // spec 04: once the ceiling is reached, further spawns return {"error":"request_cost_ceiling"}.
    if (run.meter.reached) return JSON.stringify({ error: 'request_cost_ceiling' });

    const role = SUB_AGENT_ROLES[parsed.role];
    const id = `sub_${randomBytes(6).toString('hex')}`;
    await run.onFrame?.({ event: 'subagent_started', id, role: parsed.role, task: parsed.task });
    const childCaller: Caller = { ...run.caller, tool_level: lowerLevel(run.caller.tool_level, role.level) };
    let outcome: { ok: boolean; text: string; preview: string };
    try {
      const catalogue = await this.catalogue.served(childCaller, { subAgent: true });
      const result = await this.loop({
        route: run.route,
        baseBody: { ...pick(run.baseBody, ['temperature', 'top_p']), max_tokens: CHILD_MAX_TOKENS },
        messages: [
          { role: 'system', content: role.brief },
          { role: 'user', content: parsed.task },
        ],
        catalogue,
        maxTurns: role.maxTurns,
        caller: childCaller,
        workspace: run.workspace,
        requestId: run.requestId,
        signal: run.signal,
        meter: run.meter,
        canSpawn: false,
        agent: id,
        ...(run.onTrace ? { onTrace: run.onTrace } : {}),
      });
      if (result.content.trim() === '') throw new Error('the sub-agent gave no answer');
      outcome = { ok: true, text: renderResult(`SUB-AGENT[${parsed.role}] RESULT: ${result.content}`), preview: result.content.slice(0, PREVIEW_CHARS) };
    } catch (err) {
      if (run.signal.aborted) throw err;
      const ceiling = err instanceof CostCeilingReached;
      outcome = {
        ok: false,
        text: JSON.stringify({ error: ceiling ? 'request_cost_ceiling' : 'sub_agent_failed' }),
        preview: ceiling ? 'stopped: the request reached its cost ceiling' : 'the sub-agent failed',
      };
    }
    await run.onFrame?.({ event: 'subagent_done', id, role: parsed.role, ok: outcome.ok, preview: outcome.preview });
    return outcome.text;
  }

  private contextOf(run: LoopRun, call: UpstreamToolCall, index: number): ToolContext {
    return { caller: run.caller, workspace: run.workspace, requestId: run.requestId, signal: run.signal, callId: `${call.id || 'call'}:${index}:${randomBytes(4).toString('hex')}` };
  }
}

const agentOf = (run: LoopRun): { agent?: string } => (run.agent ? { agent: run.agent } : {});

function baseBodyOf(request: ChatCompletionRequest): Record<string, unknown> {
  const out: Record<string, unknown> = { ...request };
  for (const key of NOT_FORWARDED) delete out[key];
  return out;
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (obj[k] !== undefined && obj[k] !== null) out[k] = obj[k];
  return out;
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text === '' ? '{}' : text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

