import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Token counts an answer reports. */
export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

interface TurnTiming {
  /** Wait this long before sending response headers (use it to trip the gateway's headers timeout). */
  headersDelayMs?: number;
  /** Wait this long before each streamed chunk after the first. */
  chunkDelayMs?: number;
  /**
   * Stream this many chunks, then hold the rest until `upstream.resume()` is called: lets a test
   * observe what the client got while the upstream is provably still mid-answer, without timing.
   */
  pauseAfterChunks?: number;
  /**
   * Hold the whole answer, before its headers, until `upstream.resume()`, streamed or not: the
   * request has provably reached the upstream and nothing of the answer has left it yet.
   */
  pauseBeforeAnswer?: boolean;
}

/** An assistant text answer. `content` as an array is streamed one element per chunk. */
export interface TextTurn extends TurnTiming {
  type: 'text';
  content: string | string[];
  finish_reason?: 'stop' | 'length';
  usage?: ScriptedUsage;
}

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** JSON arguments; as an array each piece is streamed in its own chunk (as real models split them). */
  arguments: string | string[];
}

/** An assistant turn that calls tools; optional text before the calls streams first. */
export interface ToolCallsTurn extends TurnTiming {
  type: 'tool_calls';
  content?: string | string[];
  calls: ScriptedToolCall[];
  usage?: ScriptedUsage;
}

/** An HTTP error answer. `body` defaults to an OpenAI envelope built from `message`/`code`. */
export interface ErrorTurn extends TurnTiming {
  type: 'error';
  status: number;
  message?: string;
  code?: string;
  /** Raw body to send instead of the envelope (e.g. an HTML error page). */
  body?: string;
  /** Extra response headers, e.g. `{ 'retry-after': '30' }` on a 429. */
  headers?: Record<string, string>;
}

/**
 * A connection that dies: with `afterChunks` undefined or 0 the socket is destroyed before any
 * response; otherwise the headers and that many chunks of `content` are streamed first.
 */
export interface DropTurn extends TurnTiming {
  type: 'drop';
  content?: string | string[];
  afterChunks?: number;
}

/**
 * An answer that never ends as it should (a broken or hostile upstream): after the headers,
 * `bytes` of one line that never ends (an SSE `data:` line, or the JSON object's content string),
 * written as fast as the client reads, and then the connection held open, nothing more sent.
 */
export interface FloodTurn extends TurnTiming {
  type: 'flood';
  bytes: number;
}

/**
 * An upstream that accepts and then sends only keep-alives, every `everyMs`, until the client
 * goes: SSE comments (`: ping`) on a stream, spaces in a JSON answer (both legal, neither an answer).
 */
export interface KeepAliveTurn extends TurnTiming {
  type: 'keepalive';
  everyMs: number;
}

/** An answer written exactly as given, whatever the request asked: a broken or unusual upstream. */
export interface RawTurn extends TurnTiming {
  type: 'raw';
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ScriptedTurn = TextTurn | ToolCallsTurn | ErrorTurn | DropTurn | FloodTurn | RawTurn | KeepAliveTurn;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined if it was not JSON); `any` so tests can reach into it freely. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  rawBody: string;
  /** Which turn answered it (index into `turns`), or -1 when the script had run out or `choose` picked the answer. */
  turn: number;
  /** The client's port: requests with the same one came over the same connection. */
  remotePort: number;
}

export interface ScriptedUpstreamOptions {
  turns: ScriptedTurn[];
  /**
   * Picks each answer from the request instead of taking `turns` in order: for many concurrent
   * callers (bench/chaos), where the order of arrival says nothing about who asks. `turns` is then unused.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  choose?: (body: any) => ScriptedTurn;
  /** Once the turns are used up: `repeat` answers with the last turn again, `error` (default) with 500. */
  whenExhausted?: 'repeat' | 'error';
  /** Upstream model name reported in answers (defaults to the request's `model`). */
  model?: string;
  port?: number;
}

export interface ScriptedUpstream {
  /** OpenAI base URL, e.g. http://127.0.0.1:40123/v1 */
  readonly baseUrl: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete (an aborted upstream call). */
  readonly aborted: RecordedRequest[];
  /** Lets every paused answer (see `pauseAfterChunks`) continue. */
  resume(): void;
  /** Resolves once `count` requests have been received. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  /** Replaces the script (and rewinds to its first turn). */
  setTurns(turns: ScriptedTurn[]): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pieces = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * A scripted OpenAI-compatible chat-completions server on a real HTTP socket: each
 * `POST /v1/chat/completions` is answered by the next turn of the script, streamed (SSE) when
 * the request says `stream: true`, as one JSON object otherwise. `GET /v1/models` lists the model.
 */
export async function startScriptedUpstream(options: ScriptedUpstreamOptions): Promise<ScriptedUpstream> {
  let turns = options.turns;
  let next = 0;
  const requests: RecordedRequest[] = [];
  const aborted: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let seq = 0;
  let paused = Promise.withResolvers<void>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } } | undefined;
      try {
        body = rawBody ? (JSON.parse(rawBody) as typeof body) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (req.method === 'GET' && path.endsWith('/models')) {
        json(res, 200, { object: 'list', data: [{ id: options.model ?? 'scripted-model', object: 'model', created: 0, owned_by: 'scripted' }] });
        return;
      }
      if (req.method === 'POST' && path.endsWith('/embeddings')) {
        requests.push({ method: req.method, path, headers: req.headers, body, rawBody, turn: -1, remotePort: req.socket.remotePort ?? 0 });
        const answered = embeddingsAnswer(body);
        json(res, answered ? 200 : 400, answered ?? envelope('input must be a string, strings, a token array or token arrays', 'invalid_request_error'));
        return;
      }
      const chosen = options.choose && body ? options.choose(body) : undefined;
      let index = chosen || next >= turns.length ? -1 : next++;
      if (index === -1 && !chosen && options.whenExhausted === 'repeat' && turns.length > 0) index = turns.length - 1;
      const recorded: RecordedRequest = { method: req.method ?? '', path, headers: req.headers, body, rawBody, turn: index, remotePort: req.socket.remotePort ?? 0 };
      requests.push(recorded);
      res.on('close', () => {
        if (!res.writableFinished) aborted.push(recorded);
      });
      if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
        json(res, 404, envelope(`no route ${req.method} ${path}`, 'not_found'));
        return;
      }
      const turn = chosen ?? (index === -1 ? undefined : turns[index]);
      if (!turn) {
        json(res, 500, envelope('the scripted upstream has no turn left', 'script_exhausted'));
        return;
      }
      const id = `chatcmpl-scripted-${++seq}`;
      void answer(turn, res, req.socket, () => paused.promise, {
        id,
        model: options.model ?? (typeof body?.model === 'string' ? body.model : 'scripted-model'),
        stream: body?.stream === true,
        includeUsage: body?.stream_options?.include_usage === true,
      }).catch(() => res.destroy());
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    aborted,
    resume() {
      paused.resolve();
      paused = Promise.withResolvers<void>();
    },
    async waitForRequests(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) throw new Error(`scripted upstream: ${requests.length} of ${count} requests after ${timeoutMs} ms`);
        await sleep(20);
      }
    },
    setTurns(t) {
      turns = t;
      next = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

interface AnswerContext {
  id: string;
  model: string;
  stream: boolean;
  includeUsage: boolean;
}

async function answer(turn: ScriptedTurn, res: ServerResponse, socket: Socket, pause: () => Promise<void>, ctx: AnswerContext): Promise<void> {
  if (turn.headersDelayMs) await sleep(turn.headersDelayMs);
  if (turn.pauseBeforeAnswer) await pause();
  if (res.destroyed) return;

  if (turn.type === 'error') {
    const body = turn.body ?? JSON.stringify(envelope(turn.message ?? `scripted error ${turn.status}`, turn.code ?? null));
    res.writeHead(turn.status, { 'content-type': turn.body ? 'text/plain' : 'application/json', 'content-length': Buffer.byteLength(body), ...turn.headers });
    res.end(body);
    return;
  }
  if (turn.type === 'drop' && !turn.afterChunks) {
    socket.destroy();
    return;
  }

  if (turn.type === 'raw') {
    res.writeHead(turn.status, turn.headers);
    res.end(turn.body);
    return;
  }
  if (turn.type === 'keepalive') {
    res.writeHead(200, { 'content-type': ctx.stream ? 'text/event-stream' : 'application/json' });
    while (!res.destroyed) {
      res.write(ctx.stream ? ': ping\n\n' : ' ');
      await sleep(turn.everyMs);
    }
    return;
  }
  if (turn.type === 'flood') {
    res.writeHead(200, { 'content-type': ctx.stream ? 'text/event-stream' : 'application/json' });
    res.write(ctx.stream ? 'data: {"choices":[{"index":0,"delta":{"content":"' : '{"choices":[{"index":0,"message":{"role":"assistant","content":"');
    const piece = Buffer.alloc(1024 * 1024, 'a');
    for (let sent = 0; sent < turn.bytes && !res.destroyed; sent += piece.length) {
      if (!res.write(piece)) await new Promise<void>((r) => res.once('drain', r).once('close', r));
    }
    // Held open: the answer neither ends nor closes (the client gives up, or the socket goes at close()).
    return;
  }

  const created = Math.floor(Date.now() / 1000);
  const base = { id: ctx.id, object: 'chat.completion.chunk', created, model: ctx.model };
  const events = streamEvents(turn, base);

  if (!ctx.stream) {
    if (turn.type === 'drop') {
      // Headers and part of the body, then the connection dies.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      res.write('{"id":"');
      await sleep(5);
      socket.destroy();
      return;
    }
    json(res, 200, completionObject(turn, ctx, created));
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  for (const event of events) {
    if (turn.type === 'drop' && sent >= (turn.afterChunks ?? 0)) {
      // Let what was written reach the peer first: destroy() discards unflushed data.
      await new Promise<void>((r) => res.write('', () => r()));
      await sleep(20);
      socket.destroy();
      return;
    }
    if (turn.pauseAfterChunks !== undefined && sent === turn.pauseAfterChunks) await pause();
    if (sent > 0 && turn.chunkDelayMs) await sleep(turn.chunkDelayMs);
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(event)}\n\n`);
    sent++;
  }
  if (turn.type === 'drop') {
    socket.destroy();
    return;
  }
  if (turn.pauseAfterChunks !== undefined && sent <= turn.pauseAfterChunks && !res.destroyed) await pause();
  if (res.destroyed) return;
  if (ctx.includeUsage) {
    res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: usageOf(turn) })}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

function streamEvents(turn: TextTurn | ToolCallsTurn | DropTurn, base: object): object[] {
  const events: object[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
  for (const text of pieces(turn.content)) events.push({ ...base, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
  if (turn.type === 'tool_calls') {
    turn.calls.forEach((call, i) => {
      const args = pieces(call.arguments);
      events.push({
        ...base,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: i, id: call.id ?? `call_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] },
            finish_reason: null,
          },
        ],
      });
      for (const a of args) {
        events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: a } }] }, finish_reason: null }] });
      }
    });
    events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
  } else if (turn.type === 'text') {
    events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: turn.finish_reason ?? 'stop' }] });
  }
  return events;
}

function completionObject(turn: TextTurn | ToolCallsTurn, ctx: AnswerContext, created: number): object {
  const content = pieces(turn.content).join('');
  const message =
    turn.type === 'tool_calls'
      ? {
          role: 'assistant',
          content: content || null,
          tool_calls: turn.calls.map((c, i) => ({
            id: c.id ?? `call_${i}`,
            type: 'function',
            function: { name: c.name, arguments: pieces(c.arguments).join('') },
          })),
        }
      : { role: 'assistant', content };
  return {
    id: ctx.id,
    object: 'chat.completion',
    created,
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: turn.type === 'tool_calls' ? 'tool_calls' : (turn.finish_reason ?? 'stop'), logprobs: null }],
    usage: usageOf(turn),
  };
}

function usageOf(turn: TextTurn | ToolCallsTurn | DropTurn): object {
  const u = turn.type === 'drop' ? undefined : turn.usage;
  const prompt = u?.prompt_tokens ?? 10;
  const completion = u?.completion_tokens ?? 5;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function envelope(message: string, code: string | null): object {
  return { error: { message, type: 'invalid_request_error', param: null, code } };
}

function json(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Splits an SSE body into its `data:` payloads: parsed JSON objects, and the string '[DONE]'. */
export function parseSse(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\n\n/)) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (!data) continue;
    out.push(data === '[DONE]' ? data : JSON.parse(data));
  }
  return out;
}

/**
 * An embeddings answer as OpenAI's API gives it, for the tests' requests: each input's vector is
 * derived from its bytes (sha256), so the same input always gets the same vector and two inputs
 * differ; `dimensions` sets its length (8 by default); `encoding_format: "base64"` answers each as
 * little-endian float32 bytes in base64, as the official SDKs ask for by default. Usage counts a
 * token per 4 characters of text, or the token array's length. Undefined for an input of another
 * shape (the caller answers 400).
 */
function embeddingsAnswer(body: unknown): object | undefined {
  const b = (body ?? {}) as { input?: unknown; model?: unknown; dimensions?: unknown; encoding_format?: unknown };
  const input = b.input;
  const isTokens = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((n) => typeof n === 'number');
  const inputs: Array<string | number[]> =
    typeof input === 'string' || isTokens(input) ? [input] : Array.isArray(input) && input.every((i) => typeof i === 'string' || isTokens(i)) ? input : [];
  if (inputs.length === 0) return undefined;
  const dims = typeof b.dimensions === 'number' && b.dimensions > 0 ? Math.min(b.dimensions, 4096) : 8;
  const vectorOf = (item: string | number[]): number[] => {
    const digest = createHash('sha256')
      .update(typeof item === 'string' ? item : JSON.stringify(item))
      .digest();
    return Array.from({ length: dims }, (_, i) => (digest[i % digest.length]! - 128) / 128);
  };
  const encode = (v: number[]) => (b.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v);
  const tokens = inputs.reduce((n, item) => n + (typeof item === 'string' ? Math.ceil(item.length / 4) : item.length), 0);
  return {
    object: 'list',
    data: inputs.map((item, index) => ({ object: 'embedding', index, embedding: encode(vectorOf(item)) })),
    model: typeof b.model === 'string' ? b.model : 'scripted-embedding',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
