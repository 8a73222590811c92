import type { CreateResponseRequest, TextFormat } from './responses.schema.js';
import { randomId } from '../ids.js';

export type OutputItem = { type: string; id: string } & Record<string, unknown>;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The Responses API `response` object, as the OpenAI SDKs read it. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  completed_at: number | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  store: boolean;
  temperature: number | null;
  top_p: number | null;
  /** The format the answer was asked in (`text.format`; plain text unless the request named one). */
  text: { format: TextFormat };
  /** The reasoning effort the request asked for; Drael makes no reasoning summaries. */
  reasoning: { effort: string | null; summary: null };
  tool_choice: unknown;
  tools: unknown[];
  truncation: 'disabled';
  usage: ResponseUsage | null;
  metadata: Record<string, string>;
  /** Echoed when the request set them, as OpenAI's response object does (each upstream turn got them too). */
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
  /** The processing tier the request asked for, as it was sent on every upstream turn. */
  service_tier?: string;
}

/** Ids in OpenAI's style: a type prefix and random hex. */
export function newId(prefix: string): string {
  return `${prefix}_${randomId()}`;
}

const RESPONSE_PREFIX = 'resp_';

/**
 * An output item's id carries its response's (`msg_<response>_<8 hex>`): an `item_reference` to it
 * (the Vercel AI SDK sends earlier answers back so) is found by loading that one response, under
 * the caller's account, with no index of items to keep. Opaque to clients, as OpenAI's ids are.
 */
export function newItemId(response: Pick<ResponseObject, 'id'>, prefix: string): string {
  return `${prefix}_${response.id.slice(RESPONSE_PREFIX.length)}_${randomId().slice(0, 8)}`;
}

/** The response an output item id names (newItemId), or undefined for an id Drael did not make so. */
export function responseIdOfItem(itemId: string): string | undefined {
  const m = /^[a-z]+_([0-9a-f]{32})_[0-9a-f]{8}$/.exec(itemId);
  return m ? `${RESPONSE_PREFIX}${m[1]}` : undefined;
}

export function newResponse(request: CreateResponseRequest): ResponseObject {
  return {
    id: newId('resp'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'in_progress',
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: request.model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    store: request.store !== false,
    temperature: request.temperature ?? null,
    top_p: request.top_p ?? null,
    // Each request states its own format and effort; a continuation inherits neither, as with OpenAI.
    text: { format: request.text?.format ?? { type: 'text' } },
    reasoning: { effort: request.reasoning?.effort ?? null, summary: null },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    truncation: 'disabled',
    usage: null,
    metadata: request.metadata ?? {},
    ...(request.user != null ? { user: request.user } : {}),
    ...(request.safety_identifier != null ? { safety_identifier: request.safety_identifier } : {}),
    ...(request.prompt_cache_key != null ? { prompt_cache_key: request.prompt_cache_key } : {}),
    ...(request.service_tier != null ? { service_tier: request.service_tier } : {}),
  };
}

/** A snapshot for an event: the object as it is now, detached from later changes. */
export function snapshotOf(response: ResponseObject): ResponseObject {
  return structuredClone(response);
}
