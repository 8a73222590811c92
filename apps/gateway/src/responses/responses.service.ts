import { Inject, Injectable, Logger } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import type { ServerResponse } from 'node:http';
import { ApiError } from '../errors/api-error.js';
import { apiErrorOf } from '../errors/error-response.js';
import { ModelRegistry } from '../models/model-registry.js';
import { validateBody } from '../openai/validate.js';
import type { ListPage, ListPageQuery } from '@drael/contracts';
import { listPageOf } from '../openai/list-query.js';
import { appendMessages, type ChatMessage } from './chat-message.js';
import { inputItemsOf, type InputItemResource } from './input-items.js';
import { translateInput } from './input.translator.js';
import type { Caller, KeyRecheck } from '../auth/identity.js';
import { ResponseLoopService } from './response-loop.service.js';
import { ResponseEvents, SseWriter } from './response-events.js';
import { newResponse, snapshotOf, type ResponseObject } from './response-object.js';
import { ResponseStore } from './response.store.js';
import { CreateResponseSchema, INCLUDE_SOURCES, RetrieveResponseQuerySchema, type CreateResponseRequest, type FunctionTool } from './responses.schema.js';
import { resolveItemReferences } from './item-references.js';
import { ToolSet } from './tool-set.js';
import { responseFormatOf } from './text-format.translator.js';

export interface CreateCall {
  readonly body: unknown;
  readonly caller: Caller;
  readonly requestId: string;
  readonly res: ServerResponse;
  /** The request's key, checked again before each turn and tool batch (a revoked key stops it). */
  readonly recheckKey?: KeyRecheck;
}

/**
 * POST /v1/responses: checks everything it can before any model call (schema, tools, engines,
 * the previous response), runs the loop, then stores the result. Streamed, the events go out as
 * they happen and exactly one terminal event ends the stream (spec 02 "one loop, one terminal");
 * not streamed, the same items come back in `output`, in order.
 */
@Injectable()
export class ResponsesService {
  private readonly log = new Logger('responses');

  constructor(
    private readonly models: ModelRegistry,
    private readonly loop: ResponseLoopService,
    private readonly store: ResponseStore,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async create(call: CreateCall): Promise<void> {
    const request = validateBody(CreateResponseSchema, call.body);
    const route = this.models.resolve(request.model);
    const toolSet = ToolSet.from(request.tools);
    toolSet.checkChoice(request.tool_choice);
    const { caller, res } = call;

    const history: ChatMessage[] = [];
    const loaded = new Map<string, FunctionTool>();
    // What storing this response will take before its answer: the previous one's whole record
    // (its conversation goes on in this one) and this input, kept twice (conversation, input items).
    let storedBytes = 0;
    if (request.previous_response_id) {
      const loadedPrevious = await this.store.load(caller.account_id, request.previous_response_id);
      if (!loadedPrevious) {
        throw new ApiError('not_found', `No response with id '${request.previous_response_id}' found`, 'previous_response_id');
      }
      const previous = loadedPrevious.stored;
      storedBytes += loadedPrevious.bytes;
      appendMessages(history, previous.messages);
      // What tool_search found earlier stays found, as long as this request still declares it.
      for (const fn of previous.loaded) if (toolSet.deferred.has(fn.name)) loaded.set(fn.name, toolSet.deferred.get(fn.name)!);
    }
    // Earlier output items the input names by reference, read in their place (a 404 for one not
    // found), together no more than the body limit: what the client could have sent inline.
    const items = await resolveItemReferences(request.input, async (id) => (await this.store.load(caller.account_id, id))?.stored, this.config.BODY_LIMIT_BYTES);
    const input = translateInput(items);
    appendMessages(history, input.messages);
    for (const fn of input.clientLoaded) loaded.set(fn.name, fn);
    if (history.length === 0) throw new ApiError('invalid_request', 'input is required', 'input');

    const response = newResponse(request);
    // A response that could not be stored is refused before the model is called (and paid for):
    // over its bounds (413/429), and with the store unavailable too (503 from the store, fail
    // closed): the client asked for a response it can GET and continue, and an answer made and
    // paid for that then cannot be stored is the worse outcome. `store: false` needs no store.
    // The input's share of the record, exactly as it will be saved (its messages and its items, ids
    // and all): an estimate from the raw input missed the items' own fields by half (attack pass 4, F8).
    const inputItems = response.store ? inputItemsOf(items) : [];
    if (response.store) await this.store.admit(caller.account_id, storedBytes + jsonBytes(input.messages) + jsonBytes(inputItems));
    const stream = request.stream === true;
    const sse = stream
      ? new SseWriter(res, call.requestId, (error) => {
          abort.abort();
          response.status = 'failed';
          response.error = { code: String(error.code), message: error.message };
          events.emit('response.failed', { response: snapshotOf(response) });
          sse?.end();
        })
      : undefined;
    const events = new ResponseEvents(sse ? (e) => sse.write(e) : undefined);
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);

    if (events.live) {
      events.emit('response.created', { response: snapshotOf(response) });
      events.emit('response.in_progress', { response: snapshotOf(response) });
    }
    try {
      await this.loop.run({
        response,
        route,
        toolSet,
        toolChoice: request.tool_choice,
        instructions: request.instructions ?? null,
        history,
        loaded,
        includeSources: (request.include ?? []).includes(INCLUDE_SOURCES),
        caller,
        requestId: call.requestId,
        signal: abort.signal,
        ...(call.recheckKey ? { recheckKey: call.recheckKey } : {}),
        events,
        onUpstreamAccepted: (deployment) => {
          if (!res.headersSent) res.setHeader('x-drael-upstream', deployment);
          sse?.open();
        },
        temperature: request.temperature,
        topP: request.top_p,
        parallelToolCalls: request.parallel_tool_calls,
        ...(request.text?.format ? { responseFormat: responseFormatOf(request.text.format) } : {}),
        ...(request.reasoning?.effort ? { reasoningEffort: request.reasoning.effort } : {}),
        forwarded: chatFieldsOf(request),
        toolCallLimit: this.config.DRAEL_REQUEST_TOOL_CALLS,
      });
    } catch (err) {
      res.off('close', onClose);
      if (abort.signal.aborted) return;
      // Before the stream started, the failure is an HTTP status with the envelope (the filter);
      // after, it is the one terminal event of the stream.
      if (!sse?.isOpen) throw err;
      const failure = apiErrorOf(err);
      if (!(err instanceof ApiError)) this.log.error(`response ${response.id} failed mid-stream: ${(err as Error).message}`, (err as Error).stack);
      response.status = 'failed';
      response.error = { code: String(failure.code), message: failure.message };
      events.emit('response.failed', { response: snapshotOf(response) });
      sse.end();
      return;
    }
    res.off('close', onClose);
    response.completed_at = Math.floor(Date.now() / 1000);
    if (response.store) {
      try {
        await this.store.save(caller.account_id, { response, messages: history, loaded: [...loaded.values()], input_items: inputItems });
      } catch (err) {
        // The answer exists and was paid for: it still goes out, after at most
        // RESPONSES_REDIS_TIMEOUT_MS (the store's failure is counted there); only GET and
        // continuation will miss it. Streamed, the stream ends with its terminal event as usual.
        // The final object says `store: false`, so the client can tell it will not be found.
        this.log.error(`could not store response ${response.id}: ${(err as Error).message}`);
        response.store = false;
      }
    }
    if (sse) {
      const terminal = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      events.emit(terminal, { response: snapshotOf(response) });
      sse.end();
      return;
    }
    const body = JSON.stringify(withOutputText(response));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': call.requestId });
    res.end(body);
  }

  async get(caller: Caller, id: string, query: unknown): Promise<ResponseObject> {
    validateBody(RetrieveResponseQuerySchema, query ?? {});
    const loaded = await this.store.load(caller.account_id, id);
    if (!loaded) throw notFound(id);
    // The record is JSON from Redis: one stored before `reasoning` was echoed (they live
    // RESPONSES_TTL_S) has none, and reads as a response that asked for no effort.
    const response: Partial<Pick<ResponseObject, 'reasoning'>> & Omit<ResponseObject, 'reasoning'> = loaded.stored.response;
    return withOutputText({ ...response, reasoning: response.reasoning ?? { effort: null, summary: null } });
  }

  /** The input items the response was made from, one page as OpenAI lists them (newest first by default). */
  async inputItems(caller: Caller, id: string, query: ListPageQuery): Promise<ListPage<InputItemResource>> {
    const loaded = await this.store.load(caller.account_id, id);
    if (!loaded) throw notFound(id);
    return listPageOf(loaded.stored.input_items ?? [], query, (item) => item.id);
  }

  /**
   * POST /v1/responses/{id}/cancel. OpenAI cancels only responses created with background=true; a
   * response Drael stored was made in the foreground and has finished, so, as OpenAI does for such
   * a response, the answer is 400 "Cannot cancel a synchronous response." (404 for an unknown id).
   */
  async cancel(caller: Caller, id: string): Promise<never> {
    if (!(await this.store.load(caller.account_id, id))) throw notFound(id);
    throw new ApiError('invalid_request', 'Cannot cancel a synchronous response.');
  }

  async delete(caller: Caller, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    if (!(await this.store.delete(caller.account_id, id))) throw notFound(id);
    return { id, object: 'response', deleted: true };
  }
}

const notFound = (id: string) => new ApiError('not_found', `No response with id '${id}' found`, 'response_id');

/** The SDKs' convenience `output_text`: every output_text part joined. */
function withOutputText(response: ResponseObject): ResponseObject & { output_text: string } {
  const text = response.output
    .filter((i) => i.type === 'message')
    .flatMap((i) => (i.content as Array<{ type: string; text?: string }>) ?? [])
    .filter((p) => p.type === 'output_text')
    .map((p) => p.text ?? '')
    .join('');
  return { ...response, output_text: text };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * The request's fields that chat completions takes under the same name and meaning, for every
 * upstream turn: the end user's identity (abuse monitoring: user, safety_identifier), the prompt
 * cache's key and the processing tier. `store` and `metadata` are not among them: they are this
 * gateway's own store (the response object, GET /v1/responses/{id}), and upstream they would store
 * each hidden turn of the loop as a chat completion the client never sees.
 */
function chatFieldsOf(request: CreateResponseRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of FORWARDED_TO_CHAT) {
    const value = request[field];
    if (typeof value === 'string') out[field] = value;
  }
  return out;
}

const FORWARDED_TO_CHAT = ['user', 'safety_identifier', 'prompt_cache_key', 'service_tier'] as const;
