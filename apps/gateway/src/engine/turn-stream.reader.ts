import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ApiError } from '../errors/api-error.js';
import { answerCutShort, answerFailure, answerStalled, answerTooLarge, MAX_MODEL_ANSWER_BYTES } from '../upstream/upstream-failure.js';
import { tokenUsageOf } from '../upstream/token-usage.js';

export interface TurnUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A tool call the model made, in the chat-completions shape both loops send back upstream. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One piece of a streamed tool call as the upstream sent it: the call's index, and what this piece adds. */
export interface ToolCallPiece {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

/** One model turn's answer, read to its end. */
export interface TurnAnswer {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: TurnUsage;
  /** The content's token logprobs (`logprobs.content` entries, in order), when the upstream sent any: the client asked for them. */
  logprobs?: unknown[];
}

/** A turn's text as it comes: the deltas of one read, and the logprobs entries that came with them (when any did). */
export type TextHandler = (deltas: readonly string[], logprobs?: readonly unknown[]) => void | Promise<void>;

interface ChunkChoice {
  index?: number;
  delta?: {
    content?: string | null;
    tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
  };
  logprobs?: { content?: unknown } | null;
  finish_reason?: string | null;
}
interface Chunk {
  choices?: ChunkChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

/**
 * The most tool calls one model turn may ask for. Every call of a turn runs at once (spec 04), and
 * each is an output item, a history message and a service call: a turn asking for more (a broken
 * or runaway upstream; no model asks for this many in earnest) is refused whole, typed, before any
 * of them runs, so that one answer cannot fan out without bound.
 */
export const MAX_TOOL_CALLS_PER_TURN = 128;

function tooManyToolCalls(): ApiError {
  return new ApiError('upstream_error', `The model asked for more than ${MAX_TOOL_CALLS_PER_TURN} tool calls in one turn; none of them was run`);
}

/**
 * The one reader of a streamed chat completion (both loops): text deltas are handed on as they
 * arrive, one call per network read with that read's deltas in order (so text before a tool call
 * reaches the client at once, and the chat writer writes once per read; the read that ends the
 * answer with `[DONE]` is handed on when the body ends, with the finish); tool calls are joined
 * from their pieces by index; usage comes from the final chunk. A chunk that is not JSON, an error
 * chunk, or a body that breaks off is the one `upstream_*` error of answerFailure.
 */
/** The body of a streamed answer: a Readable (undici's), read as it fills. */
export type TurnBody = Pick<Readable, 'read' | 'on' | 'off' | 'destroy'>;

export function readTurnStream(
  body: TurnBody,
  signal: AbortSignal,
  onText?: TextHandler,
  idleMs?: number,
  /** Tool-call pieces as they arrive (the Responses API streams a function call's arguments), after the same read's text; a promise holds the reading as onText's does. */
  onToolCall?: (pieces: readonly ToolCallPiece[]) => void | Promise<void>,
): Promise<TurnAnswer> {
  const answer: TurnAnswer = { content: '', toolCalls: [], finishReason: null, usage: { prompt_tokens: 0, completion_tokens: 0 } };
  // By the index the upstream gives each call: a Map, not an array, so that an index of 99999999
  // (a broken or hostile upstream) costs one entry, not a hundred-million-slot walk at the end.
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  let events = 0;
  const pending: string[] = [];
  /** Logprobs entries of the pending text (only a request that asked for logprobs gets any). */
  const pendingLogprobs: unknown[] = [];
  const pendingPieces: ToolCallPiece[] = [];
  let failure: ApiError | undefined;
  let done = false;
  /** A choice 0 came: an answer whose events never carry one is no answer. */
  let answered = false;

  // Whatever shape an event has, reading it never throws: an exception here would leave the parser
  // inside the body's 'readable' listener, where nothing catches it.
  const onEvent = (event: EventSourceMessage) => {
    try {
      readEvent(event);
    } catch {
      failure ??= new ApiError('upstream_error', 'The model upstream sent an event of an unexpected shape');
    }
  };
  const readEvent = (event: EventSourceMessage) => {
    // The answer ends at [DONE]: anything after it (text, a usage that would replace the real one) is not read.
    if (done) return;
    events += 1;
    if (event.data === '[DONE]') {
      done = true;
      return;
    }
    if (failure) return;
    let chunk: Chunk;
    try {
      chunk = JSON.parse(event.data) as Chunk;
    } catch {
      failure = new ApiError('upstream_error', 'The model upstream sent an event that is not JSON');
      return;
    }
    // `null`, a number, an array: no chunk (reading fields of `null` would throw inside the parser).
    if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
      failure = new ApiError('upstream_error', 'The model upstream sent an event that is not a JSON object');
      return;
    }
    if (chunk.error) {
      failure = new ApiError('upstream_error', `The model upstream failed mid-answer: ${chunk.error.message ?? 'unknown error'}`);
      return;
    }
    if (chunk.usage) answer.usage = tokenUsageOf(chunk.usage);
    // Choice 0 only: both loops read one answer (a client's `n` above 1 still gets one).
    const choice = firstChoiceOf<ChunkChoice>(chunk.choices);
    if (!choice) return;
    answered = true;
    const text = choice.delta?.content;
    if (typeof text === 'string' && text.length > 0) {
      answer.content += text;
      pending.push(text);
    }
    const logprobs = choice.logprobs?.content;
    if (Array.isArray(logprobs) && logprobs.length > 0) {
      answer.logprobs ??= [];
      for (const entry of logprobs as unknown[]) {
        answer.logprobs.push(entry);
        pendingLogprobs.push(entry);
      }
    }
    for (const piece of choice.delta?.tool_calls ?? []) {
      const i = typeof piece.index === 'number' ? piece.index : calls.size;
      let call = calls.get(i);
      if (!call) {
        if (calls.size >= MAX_TOOL_CALLS_PER_TURN) {
          failure = tooManyToolCalls();
          return;
        }
        calls.set(i, (call = { id: '', name: '', arguments: '' }));
      }
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name += piece.function.name;
      if (piece.function?.arguments) call.arguments += piece.function.arguments;
      if (onToolCall) {
        pendingPieces.push({
          index: i,
          ...(piece.id ? { id: piece.id } : {}),
          ...(piece.function?.name ? { name: piece.function.name } : {}),
          ...(piece.function?.arguments ? { arguments: piece.function.arguments } : {}),
        });
      }
    }
    if (choice.finish_reason) answer.finishReason = finishReasonOf(choice.finish_reason);
  };
  const parser = createParser({ onEvent });
  const decoder = new StringDecoder('utf8');

  // Read on the Readable's own events rather than `for await` (issue 20: no async iterator, no
  // end-of-stream watcher and no promise per read on the tool round's path). read() hands over
  // everything buffered, so tokens that gathered while the client's socket was full go on as one.
  return new Promise<TurnAnswer>((resolve, reject) => {
    let settled = false;
    /** onText's promise is pending (the client's socket is full): read nothing more until it settles. */
    let waiting = false;
    let ended = false;
    const settle = (err: Error | undefined, value?: TurnAnswer) => {
      if (settled) return;
      settled = true;
      if (watchdog) clearInterval(watchdog);
      body.off('readable', pump);
      body.off('end', onEnd);
      body.off('close', onClose);
      // onError stays: an error after the answer settled finds a listener (fail ignores it).
      if (err === undefined) resolve(value!);
      else reject(err);
    };
    const fail = (err: unknown) => {
      if (settled) return;
      body.destroy();
      // An abort's reason goes on as it came (what the engine's callers expect of an abort).
      settle(signal.aborted ? (err as Error) : answerFailure(err));
    };
    /** Reads nothing more until `r` settles (the client's socket is full), then goes on. */
    const hold = (r: Promise<void>, then: () => boolean = () => true) => {
      waiting = true;
      r.then(() => {
        waiting = false;
        if (!then()) return;
        if (ended) finish();
        else pump();
      }, fail);
    };
    /** Hands a read's tool-call pieces on (text first: a model writes before it calls); false if the listener failed or its promise holds the reading. */
    const handOn = (pieces: ToolCallPiece[]): boolean => {
      if (pieces.length === 0 || !onToolCall) return true;
      let r: void | Promise<void>;
      try {
        r = onToolCall(pieces);
      } catch (err) {
        fail(err);
        return false;
      }
      if (!r) return true;
      hold(r);
      return false;
    };
    /** Hands the pending text on; false while its promise holds the reading. */
    const flush = (): boolean => {
      const pieces = pendingPieces.splice(0);
      if (pending.length === 0 || !onText) {
        pending.length = 0;
        pendingLogprobs.length = 0;
        return handOn(pieces);
      }
      let r: void | Promise<void>;
      try {
        r = pendingLogprobs.length === 0 ? onText(pending.splice(0)) : onText(pending.splice(0), pendingLogprobs.splice(0));
      } catch (err) {
        fail(err);
        return false;
      }
      if (!r) return handOn(pieces);
      hold(r, () => handOn(pieces));
      return false;
    };
    let tailFed = false;
    let read = 0;
    const finish = () => {
      if (settled || waiting) return;
      if (!tailFed) {
        tailFed = true;
        parser.feed(decoder.end());
      }
      if (!flush()) return;
      // A body that ended with no event at all (an HTML page, an empty body) is no answer, not an
      // empty one; nor is one whose events never carried a choice, nor one that stopped with
      // neither [DONE] nor a finish reason (a connection cut between events looks like an end).
      if (!failure && events === 0) failure = new ApiError('upstream_error', 'The model upstream answered with no stream events');
      if (!failure && !answered) failure = new ApiError('upstream_error', 'The model upstream answered without a message');
      if (!failure && !done && answer.finishReason === null) failure = answerCutShort();
      if (failure) {
        body.destroy();
        return settle(failure);
      }
      answer.toolCalls = [...calls]
        .sort(([a], [b]) => a - b)
        .map(([, c]) => c)
        .filter((c) => c.name !== '')
        .map((c, i) => ({ id: c.id || `call_drael_${i}`, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      settle(undefined, answer);
    };
    function pump(): void {
      if (settled || waiting) return;
      let chunk: Buffer | string | null;
      while ((chunk = body.read() as Buffer | string | null) !== null) {
        // Bounded: the parser holds an unfinished line and `answer` the text (MAX_MODEL_ANSWER_BYTES).
        read += chunk.length;
        if (read > MAX_MODEL_ANSWER_BYTES) failure = answerTooLarge();
        else parser.feed(typeof chunk === 'string' ? chunk : decoder.write(chunk));
        if (failure) {
          body.destroy();
          return settle(failure);
        }
        // The read that holds `[DONE]` hands its text on at the body's end, a moment later: the
        // answer's last text and the finish the loop writes next then leave in one client write
        // (issue 20: one socket write fewer per streamed answer whose end comes in one read).
        if (!done && !flush()) return;
      }
    }
    function onEnd(): void {
      ended = true;
      finish();
    }
    function onError(err: Error): void {
      fail(err);
    }
    // A body closed before its end without an error (what `for await` reports as a premature close).
    function onClose(): void {
      if (!ended) fail(new Error('the upstream answer closed before its end'));
    }
    // Keep-alive comments (`: ping`) are bytes, so they hold off undici's body timeout for ever: the
    // same bound counted in answer events instead (checked every idleMs: one timer per turn, nothing
    // per event). A client whose socket is full holds the reading, and is not the upstream's silence.
    let seen = -1;
    const watchdog =
      idleMs === undefined
        ? undefined
        : setInterval(() => {
            if (waiting || events !== seen) {
              seen = waiting ? -1 : events;
              return;
            }
            body.destroy();
            settle(answerStalled(idleMs));
          }, idleMs);
    watchdog?.unref();
    body.on('readable', pump);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
  });
}

/**
 * A streamed turn whose upstream answered one JSON object instead (a server that ignores
 * `stream: true`): read whole, bounded like any answer, then read as turnOfJson reads it.
 */
export async function readJsonTurn(body: AsyncIterable<Buffer> & Pick<Readable, 'destroy'>, signal: AbortSignal, onText?: TextHandler): Promise<TurnAnswer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > MAX_MODEL_ANSWER_BYTES) {
        body.destroy();
        throw answerTooLarge();
      }
      chunks.push(chunk);
    }
  } catch (err) {
    throw err instanceof ApiError || signal.aborted ? err : answerFailure(err);
  }
  return turnOfJson(Buffer.concat(chunks).toString('utf8'), onText);
}

/**
 * A whole answer's text as a turn: a completion object, or, from a server that streams whatever it
 * is asked (`stream: false` ignored), the stream's events read as readTurnStream reads them.
 */
export function turnOfText(text: string, signal: AbortSignal, onText?: TextHandler): Promise<TurnAnswer> {
  return /^\s*(?:data|event|id|retry)?:/.test(text) ? readTurnStream(Readable.from([text]), signal, onText) : turnOfJson(text, onText);
}

interface CompletionChoice {
  index?: number;
  message?: { content?: string | null; tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }> };
  logprobs?: { content?: unknown } | null;
  finish_reason?: string | null;
}
interface Completion {
  choices?: CompletionChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

/**
 * The same turn read from a non-streamed completion, its text read whole by UpstreamClient.read
 * (issue 20: a client that does not stream needs no upstream stream): the same answer, tool
 * calls, usage and errors as readTurnStream, the text handed on once, whole.
 */
export async function turnOfJson(text: string, onText?: TextHandler): Promise<TurnAnswer> {
  let completion: Completion;
  try {
    completion = JSON.parse(text) as Completion;
  } catch {
    throw new ApiError('upstream_error', 'The model upstream sent an answer that is not JSON');
  }
  if (typeof completion !== 'object' || completion === null || Array.isArray(completion)) {
    throw new ApiError('upstream_error', 'The model upstream sent an answer that is not a JSON object');
  }
  if (completion.error) throw new ApiError('upstream_error', `The model upstream failed mid-answer: ${completion.error.message ?? 'unknown error'}`);
  const choice = firstChoiceOf<CompletionChoice>(completion.choices);
  if (!choice) throw new ApiError('upstream_error', 'The model upstream answered without a message');
  const listed = choice.message?.tool_calls;
  if (listed !== undefined && listed !== null && !Array.isArray(listed)) throw new ApiError('upstream_error', 'The model upstream sent tool calls that are not a list');
  const calls = listed ?? [];
  if (calls.length > MAX_TOOL_CALLS_PER_TURN) throw tooManyToolCalls();
  const content = typeof choice.message?.content === 'string' ? choice.message.content : '';
  const listedLogprobs = choice.logprobs?.content;
  const logprobs = Array.isArray(listedLogprobs) && listedLogprobs.length > 0 ? (listedLogprobs as unknown[]) : undefined;
  if (content.length > 0 && onText) await (logprobs ? onText([content], logprobs) : onText([content]));
  return {
    ...(logprobs ? { logprobs } : {}),
    content,
    toolCalls: calls
      .filter((c) => typeof c === 'object' && c !== null && c.function?.name)
      .map((c, i) => ({ id: c.id || `call_drael_${i}`, type: 'function', function: { name: c.function!.name!, arguments: c.function!.arguments ?? '' } })),
    finishReason: choice.finish_reason ? finishReasonOf(choice.finish_reason) : null,
    usage: tokenUsageOf(completion.usage),
  };
}

/** Choice 0 of an answer's `choices` (by its `index`, or the first without one); undefined when there is none. */
function firstChoiceOf<C extends { index?: number }>(choices: unknown): C | undefined {
  if (choices === undefined || choices === null) return undefined;
  if (!Array.isArray(choices)) throw new ApiError('upstream_error', 'The model upstream sent choices that are not a list');
  for (const c of choices as unknown[]) {
    if (typeof c === 'object' && c !== null && ((c as C).index ?? 0) === 0) return c as C;
  }
  return undefined;
}

/** The finish reasons of the chat completions API; any other an upstream invents is `stop` to the client. */
const FINISH_REASONS: ReadonlySet<string> = new Set(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

function finishReasonOf(reason: unknown): string {
  return typeof reason === 'string' && FINISH_REASONS.has(reason) ? reason : 'stop';
}
