import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ApiError } from '../errors/api-error.js';
import { UpstreamClient, type RoutedSink } from '../upstream/upstream.client.js';
import {
  answerCutShort,
  answerDeadlinePassed,
  answerFailure,
  answerStalled,
  answerTooLarge,
  MAX_MODEL_ANSWER_BYTES,
  notAnAnswer,
  type AttemptFailure,
} from '../upstream/upstream-failure.js';
import { holdOpenStream } from '../http/open-streams.js';
import type { ResolvedModel } from '../models/model-registry.js';
import type { DeploymentConfig } from '../models/model-routes.config.js';
import { metricsEnabled } from '@drael/metrics';
import { streamClosed, streamOpened, upstreamMetrics } from '../metrics/gateway.metrics.js';
import { usageFromTail } from './usage-tail.js';
import { completionAsStream } from './completion-as-stream.js';

/**
 * An upstream endpoint proxy mode forwards to: its path under the deployment's base URL, and the
 * field every whole answer of it holds (searched for, not parsed: an answer without it, such as an
 * error object sent with 200, is refused and the next deployment asked).
 */
export interface ProxiedEndpoint {
  readonly path: string;
  readonly answerField: Buffer;
  /** What a whole answer is, in the refusal's words. */
  readonly answerName: string;
}

export const CHAT_COMPLETIONS: ProxiedEndpoint = { path: '/chat/completions', answerField: Buffer.from('"choices"'), answerName: 'chat completion' };
export const EMBEDDINGS: ProxiedEndpoint = { path: '/embeddings', answerField: Buffer.from('"data"'), answerName: 'embedding list' };

export interface ProxyCall {
  readonly route: ResolvedModel;
  /** Where the request goes (CHAT_COMPLETIONS unless said). */
  readonly endpoint?: ProxiedEndpoint;
  /** The request body as a deployment gets it, given its upstream model name. */
  readonly bodyFor: (upstreamModel: string) => string | Buffer;
  readonly stream: boolean;
  /** The client asked for a stream's usage event (`stream_options.include_usage`): its tokens can be counted. */
  readonly streamReportsUsage: boolean;
  readonly requestId: string;
  readonly res: ServerResponse;
  /** Headers not set on `res` (request id, rate limits), written with the answer's head. */
  readonly head?: Record<string, string>;
}

class ClientGone extends Error {
  constructor() {
    super('the client closed the connection');
  }
}

/** The answer was refused while it was read (too large, past its deadline, stalled): the client has its error already. */
class AnswerDropped extends Error {
  constructor() {
    super('the answer was dropped');
  }
}

/**
 * Proxy mode: the request goes to a deployment of the alias as is (UpstreamClient routes and
 * retries) and the answer comes back as is.
 * Streaming answers are written to the client chunk by chunk as they arrive, without parsing
 * or re-encoding them (CPU per request is a judged figure); the upstream is paused while the
 * client's socket is full. A client that goes away aborts the upstream request.
 *
 * Tokens and cost are counted from the answer's `usage` without parsing it (usage-tail.ts): a
 * non-streamed body's last bytes, or a stream's last chunks when the client asked for its usage
 * event; a stream without one reports no tokens, and none are counted.
 *
 * The answer's `model` field stays the upstream's: OpenAI itself answers `gpt-4o` requests with
 * a dated name, so clients (the SDKs included) never rely on it echoing the request, and
 * rewriting it would mean parsing and re-encoding every chunk.
 *
 * Bounded as the catalogue loop's readers are (attack report, pass 2: F1, F3, F4): a whole answer
 * must be complete within the deployment's body timeout of its head, and a stream must carry an
 * answer event (a `data:` line) within each such window, so an upstream trickling keep-alives
 * gets a 504 instead of holding the client for ever; a stream that ends with neither `[DONE]` nor
 * a finish reason gets an error event, not a clean end that reads as a whole answer; a stream to a
 * request for a whole answer is refused (502, next deployment), and one JSON completion to a
 * request for a stream (a server that ignores `stream: true`) is converted into that stream.
 */
@Injectable()
export class ChatProxyService {
  constructor(private readonly upstream: UpstreamClient) {}

  forward(call: ProxyCall): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.upstream.dispatch(
        call.route,
        {
          path: (call.endpoint ?? CHAT_COMPLETIONS).path,
          bodyFor: call.bodyFor,
          requestId: call.requestId,
          accept: call.stream ? 'text/event-stream' : 'application/json',
        },
        new ProxyHandler(call, resolve, reject, (d) => this.upstream.answerIdleMs(d)),
      );
    });
  }
}

/**
 * One proxied answer, driven by the routed dispatch: retries happen before it sees anything;
 * once an attempt is accepted its head and chunks come here and go to the client as they are.
 */
class ProxyHandler implements RoutedSink {
  private controller?: Dispatcher.DispatchController;
  private status = 0;
  private contentType: string | undefined;
  /** Non-streaming answers are collected (at most MAX_MODEL_ANSWER_BYTES); streamed ones never are. */
  private chunks: Buffer[] = [];
  private collected = 0;
  private streaming = false;
  private settled = false;
  /** Counted in the open-streams gauge: from the stream's head until the response closes. */
  private countedOpen = false;
  private closed = false;
  private deployment: DeploymentConfig | undefined;
  /** Metrics on and a usage event to expect: the stream's last three chunks are kept (references, no copy). */
  private readonly keepTail: boolean;
  private tail0: Buffer | undefined;
  private tail1: Buffer | undefined;
  private tail2: Buffer | undefined;
  /** A stream request answered with one JSON object: collected, then converted (completionAsStream). */
  private jsonForStream = false;
  /** A whole answer's deadline, or a stream's keep-alive watchdog. */
  private timer: NodeJS.Timeout | undefined;
  /** An answer event (`data:`) came since the watchdog last looked. */
  private sawEvent = false;
  /** The client's socket is full: the reading waits for it, which is not the upstream's silence. */
  private paused = false;
  /** The listeners of the client's response: clientClosed and clientDrained, bound in the constructor. */
  private readonly onClose: () => void;
  private readonly onDrain: () => void;

  constructor(
    private readonly call: ProxyCall,
    private readonly resolve: () => void,
    private readonly reject: (err: unknown) => void,
    /** The deployment's body timeout: a whole answer's deadline from its head, a stream's longest run of keep-alives. */
    private readonly idleMsOf: (deployment: DeploymentConfig) => number,
  ) {
    // Made as consts, not field initialisers: V8 pretenures a closure assigned to a property
    // (eslint.config.js, no-restricted-syntax).
    const onClose = () => this.clientClosed();
    const onDrain = () => this.clientDrained();
    this.onClose = onClose;
    this.onDrain = onDrain;
    call.res.once('close', onClose);
    this.keepTail = call.stream && call.streamReportsUsage && metricsEnabled();
  }

  private clientClosed(): void {
    this.closed = true;
    this.uncountStream();
    if (!this.call.res.writableFinished) this.controller?.abort(new ClientGone());
    this.finish();
  }

  private clientDrained(): void {
    // The reading resumes: a whole window from here before keep-alives alone count as a stall.
    this.paused = false;
    this.sawEvent = true;
    this.controller?.resume();
  }

  private get endpoint(): ProxiedEndpoint {
    return this.call.endpoint ?? CHAT_COMPLETIONS;
  }

  refuses(headers: IncomingHttpHeaders, origin: string): AttemptFailure | undefined {
    // A client that asked for a whole answer cannot read a stream (the SDKs fail on its first byte).
    if (!this.call.stream && /^\s*text\/event-stream\b/i.test(contentTypeOf(headers) ?? '')) return notAnAnswer('answered a stream to a request for a whole answer', origin);
    return undefined;
  }

  onAttempt(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.call.res.destroyed) controller.abort(new ClientGone());
  }

  onAccepted(deployment: DeploymentConfig, _controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.deployment = deployment;
    this.contentType = contentTypeOf(headers);
    const idleMs = this.idleMsOf(deployment);
    this.jsonForStream = this.call.stream && /^\s*application\/json\b/i.test(this.contentType ?? '');
    if (!this.call.stream || this.jsonForStream) {
      this.timer = setTimeout(() => this.drop(answerDeadlinePassed(idleMs, deployment.name)), idleMs);
      this.timer.unref();
      return;
    }
    this.timer = setInterval(() => {
      if (this.paused || this.sawEvent) this.sawEvent = false;
      else this.drop(answerStalled(idleMs, deployment.name));
    }, idleMs);
    this.timer.unref();
    this.streaming = true;
    const head = this.call.head ?? {};
    head['content-type'] = this.contentType ?? 'text/event-stream; charset=utf-8';
    head['cache-control'] = 'no-cache';
    head['x-accel-buffering'] = 'no';
    head['x-request-id'] = this.call.requestId;
    head['x-drael-upstream'] = deployment.name;
    this.call.res.writeHead(statusCode, head);
    if (!this.closed) {
      this.countedOpen = true;
      streamOpened('proxy');
      holdOpenStream(this.call.res, (error) => {
        this.controller?.abort(new ClientGone());
        this.call.res.end(errorEventAfter(this.tail2, error));
      });
    }
  }

  onData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.streaming) {
      // The last three chunks (references, no copy): the usage event, and how the stream ended.
      this.tail0 = this.tail1;
      this.tail1 = this.tail2;
      this.tail2 = chunk;
      // One search per chunk until the watchdog's window has seen an event, none after it.
      if (!this.sawEvent && chunk.indexOf(DATA_FIELD) !== -1) this.sawEvent = true;
      if (!this.call.res.write(chunk)) {
        this.paused = true;
        controller.pause();
        this.call.res.once('drain', this.onDrain);
      }
      return;
    }
    // A whole answer is held until its end (its length goes in the head): bounded like every
    // answer the gateway keeps, so one upstream cannot take the replica's memory.
    this.collected += chunk.length;
    if (this.collected > MAX_MODEL_ANSWER_BYTES) {
      this.chunks = [];
      this.fail(answerTooLarge());
      controller.abort(new AnswerDropped());
      return;
    }
    this.chunks.push(chunk);
  }

  onEnd(): void {
    const { res } = this.call;
    if (this.streaming) {
      const tail = [this.tail0, this.tail1, this.tail2];
      // A clean end without `[DONE]` or a finish reason is a cut the client would take for the whole answer.
      if (streamFinished(tail)) res.end();
      else res.end(errorEventAfter(this.tail2, answerCutShort()));
      if (this.keepTail) this.countUsage(tail);
      return this.finish();
    }
    let body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    let contentType = this.contentType ?? 'application/json';
    if (this.jsonForStream) {
      const events = completionAsStream(body.toString('utf8'), this.call.streamReportsUsage);
      if (events === undefined) return this.fail(notAnAnswer('answered JSON that is no chat completion to a request for a stream', this.deployment!.name).error);
      if (metricsEnabled()) this.countUsage([body]);
      body = Buffer.from(events);
      contentType = 'text/event-stream; charset=utf-8';
    } else if (body.indexOf(this.endpoint.answerField) === -1) {
      // An answer without its field (`{"detail":…}`, an error object sent as 200): searched, not parsed.
      return this.fail(notAnAnswer(`answered JSON that is no ${this.endpoint.answerName}`, this.deployment!.name).error);
    } else if (metricsEnabled()) this.countUsage([body]);
    const head: Record<string, string | number> = this.call.head ?? {};
    head['content-type'] = contentType;
    head['content-length'] = body.length;
    head['x-request-id'] = this.call.requestId;
    head['x-drael-upstream'] = this.deployment!.name;
    res.writeHead(this.status, head);
    res.end(body);
    this.finish();
  }

  onError(err: Error): void {
    const { res } = this.call;
    if (err instanceof ClientGone || err instanceof AnswerDropped || res.destroyed) return this.finish();
    if (this.streaming) {
      // Headers are gone: the failure is reported in-band, as one error event, then the end (never retried).
      res.end(errorEventAfter(this.tail2, answerFailure(err, this.deployment?.name ?? 'the upstream')));
      return this.finish();
    }
    this.fail(answerFailure(err, this.deployment?.name ?? 'the upstream'));
  }

  onFailure(error: ApiError): void {
    if (this.call.res.destroyed) return this.finish();
    this.fail(error);
  }

  /**
   * The answer is given up while it is read (past its deadline, stalled on keep-alives): the
   * upstream request stops, and the client gets the error, as a status before the head and as an
   * event after it.
   */
  private drop(error: ApiError): void {
    if (this.settled) return;
    // Settled first: the abort calls onError at once, which would settle with no answer.
    if (this.streaming) {
      this.call.res.end(errorEventAfter(this.tail2, error));
      this.finish();
    } else this.fail(error);
    this.controller?.abort(new AnswerDropped());
  }

  /** The stream no longer counts as open: its answer ended (or failed) or its client went away. */
  private uncountStream(): void {
    if (!this.countedOpen) return;
    this.countedOpen = false;
    streamClosed('proxy');
  }

  /** The answer's usage, from its last bytes, in the alias's token and cost series. */
  private countUsage(tail: readonly (Buffer | undefined)[]): void {
    const d = this.deployment;
    const usage = d && usageFromTail(tail);
    if (usage) upstreamMetrics.usage(d.alias, d.name, usage, d);
  }

  private finish(): void {
    this.uncountStream();
    clearTimeout(this.timer);
    if (this.settled) return;
    this.settled = true;
    this.call.res.off('close', this.onClose);
    this.call.res.off('drain', this.onDrain);
    this.resolve();
  }

  private fail(err: unknown): void {
    this.uncountStream();
    clearTimeout(this.timer);
    if (this.settled) return;
    this.settled = true;
    this.call.res.off('close', this.onClose);
    this.reject(err);
  }
}

const DATA_FIELD = Buffer.from('data:');
// How a whole stream ends: OpenAI's terminator, or a choice's finish reason (a few servers send no `[DONE]`).
const STREAM_END = /\[DONE\]|"finish_reason"\s*:\s*"/;
// Of each of the last chunks, at most this much is looked at (the end is in the last events).
const TAIL_BYTES = 8 * 1024;

/** Whether a stream's last chunks hold its end (the bytes are only searched, never parsed). */
function streamFinished(tail: readonly (Buffer | undefined)[]): boolean {
  let text = '';
  for (const chunk of tail) if (chunk) text += chunk.toString('latin1', Math.max(0, chunk.length - TAIL_BYTES));
  return STREAM_END.test(text);
}

/**
 * The error event that ends a relayed stream. After bytes that stopped inside an event (a cut
 * mid-line), a blank line first ends that event, so the error is an event of its own that the
 * client's parser reads, not text glued onto the upstream's unfinished line.
 */
function errorEventAfter(last: Buffer | undefined, error: ApiError): string {
  const n = last?.length ?? 0;
  const ended = n === 0 || (last![n - 1] === 0x0a && last![n - 2] === 0x0a) || (last![n - 1] === 0x0a && last![n - 2] === 0x0d && last![n - 3] === 0x0a);
  return `${ended ? '' : '\n\n'}data: ${JSON.stringify(error.toEnvelope())}\n\n`;
}

function contentTypeOf(headers: IncomingHttpHeaders): string | undefined {
  const ct = headers['content-type'];
  return Array.isArray(ct) ? ct[0] : ct;
}
