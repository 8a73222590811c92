import type { ServerResponse } from 'node:http';
import type { ApiError } from '../errors/api-error.js';
import type { TurnUsage } from '../engine/turn-stream.reader.js';
import { drained } from '../http/drained.js';
import { holdOpenStream } from '../http/open-streams.js';
import { VENDOR_FRAME_KEY } from '../openai/vendor-frame.js';
import { trackOpenStream } from '../metrics/gateway.metrics.js';
import type { SubAgentFrame } from '../tools/server-tool.js';

/**
 * A vendor frame riding inside the SSE delta: spec 04's sub-agent progress frames, always; and,
 * when the request asks with `x-drael-tool-events: 1` (the console's playground), each turn and
 * each tool call with the result as the model saw it. `agent` names the sub-agent a frame
 * belongs to (absent: the request's own loop).
 */
export type DraelFrame =
  | SubAgentFrame
  | { event: 'turn_started'; turn: number; agent?: string }
  | { event: 'tool_started'; id: string; tool: string; arguments: string; turn: number; agent?: string }
  | { event: 'tool_done'; id: string; tool: string; ok: boolean; duration_ms: number; result: string; agent?: string };

/**
 * Catalogue mode's one ordinary OpenAI stream: one id, the role once, content deltas, exactly one
 * finish_reason, usage (when asked) and `[DONE]` once. Intermediate turns and tool traffic never
 * reach it; vendor frames ride as `delta.drael` so that OpenAI clients ignore them. Headers are
 * sent with the first event, so a failure before any output is still a proper HTTP error.
 */
export class ChatStreamWriter {
  private started = false;
  private ended = false;
  /** Writes so far, and as the keep-alive last saw them: unchanged over a whole period is silence. */
  private writes = 0;
  private writesSeen = 0;
  private readonly keepAlive: NodeJS.Timeout;
  private readonly prefix: string;
  private readonly suffix = '}\n\n';

  constructor(
    private readonly res: ServerResponse,
    /** `head`: the request's own headers (x-request-id, rate limits, x-drael-upstream), in the stream's one writeHead. */
    private readonly meta: { id: string; model: string; created: number; requestId: string; head?: Record<string, string>; keepAliveMs: number },
  ) {
    // Every chunk shares its head; only the choices differ (no per-chunk object building).
    this.prefix = `data: {"id":${JSON.stringify(meta.id)},"object":"chat.completion.chunk","created":${meta.created},"model":${JSON.stringify(meta.model)},`;
    // One timer per stream, nothing per write: a period with no write sends an SSE comment (which
    // every client ignores), opening the stream first if nothing was sent yet.
    this.keepAlive = setInterval(() => {
      if (this.writes !== this.writesSeen) {
        this.writesSeen = this.writes;
        return;
      }
      if (this.ended || this.res.destroyed) return;
      this.start();
      this.res.write(': keep-alive\n\n');
    }, meta.keepAliveMs);
    this.keepAlive.unref();
    res.once('close', () => clearInterval(this.keepAlive));
  }

  get hasStarted(): boolean {
    return this.started;
  }

  /** Written at once; a promise only while the client's socket is full (the caller holds the upstream until it settles). */
  text(content: string, logprobs?: readonly unknown[]): void | Promise<void> {
    if (content === '') return;
    return this.write(this.choice(`{"content":${JSON.stringify(content)}}`, null, logprobs));
  }

  frame(frame: DraelFrame): void | Promise<void> {
    return this.write(this.choice(`{"${VENDOR_FRAME_KEY}":${JSON.stringify(frame)}}`, null));
  }

  /** The one finish_reason, then usage when the client asked for it, then [DONE]. */
  async finish(finishReason: string, usage: TurnUsage | undefined): Promise<void> {
    let out = this.choice('{}', finishReason);
    if (usage) {
      const u = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
      out += `${this.prefix}"choices":[],"usage":${JSON.stringify(u)}${this.suffix}`;
    }
    out += 'data: [DONE]\n\n';
    await this.write(out);
    this.end();
  }

  /** A failure after the stream started: one error event, then the end (as the proxy does). */
  fail(error: ApiError): void {
    if (this.ended || this.res.destroyed) return;
    this.start();
    this.res.write(`data: ${JSON.stringify(error.toEnvelope())}\n\n`);
    this.end();
  }

  private choice(delta: string, finishReason: string | null, logprobs?: readonly unknown[]): string {
    const lp = logprobs === undefined ? 'null' : `{"content":${JSON.stringify(logprobs)}}`;
    return `${this.prefix}"choices":[{"index":0,"delta":${delta},"logprobs":${lp},"finish_reason":${finishReason === null ? 'null' : JSON.stringify(finishReason)}}]${this.suffix}`;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    const head = this.meta.head ?? {};
    head['content-type'] = 'text/event-stream; charset=utf-8';
    head['cache-control'] = 'no-cache';
    head['x-accel-buffering'] = 'no';
    head['x-request-id'] = this.meta.requestId;
    this.res.writeHead(200, head);
    this.res.write(this.choice('{"role":"assistant","content":""}', null));
    trackOpenStream(this.res, 'catalogue');
    holdOpenStream(this.res, (error) => this.fail(error));
  }

  private write(data: string): void | Promise<void> {
    if (this.ended || this.res.destroyed) return;
    this.start();
    this.writes++;
    // A socket that closed while we wrote never drains: its close ends the wait instead.
    if (!this.res.write(data) && !this.res.destroyed && !this.res.closed) return drained(this.res);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
    if (!this.res.destroyed) this.res.end();
  }
}
