import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ApiError } from '../errors/api-error.js';
import { UpstreamClient, upstreamFailure } from '../upstream/upstream.client.js';
import type { ResolvedModel } from '../models/model-registry.js';

export interface ProxyCall {
  readonly route: ResolvedModel;
  /** The request body exactly as the upstream gets it (model already replaced). */
  readonly body: string | Buffer;
  readonly stream: boolean;
  readonly requestId: string;
  readonly res: ServerResponse;
  /** Headers not set on `res` (request id, rate limits), written with the answer's head. */
  readonly head?: Record<string, string>;
}

// An upstream error body longer than this is cut: it only has to carry a message.
const MAX_ERROR_BODY_BYTES = 64 * 1024;

class ClientGone extends Error {
  constructor() {
    super('the client closed the connection');
  }
}

/**
 * Proxy mode: the request goes to the alias's upstream as is and the answer comes back as is.
 * Streaming answers are written to the client chunk by chunk as they arrive, without parsing
 * or re-encoding them (CPU per request is a judged figure); the upstream is paused while the
 * client's socket is full. A client that goes away aborts the upstream request.
 *
 * The answer's `model` field stays the upstream's: OpenAI itself answers `gpt-4o` requests with
 * a dated name, so clients (the SDKs included) never rely on it echoing the request, and
 * rewriting it would mean parsing and re-encoding every chunk.
 */
@Injectable()
export class ChatProxyService {
  constructor(private readonly upstream: UpstreamClient) {}

  forward(call: ProxyCall): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.upstream.dispatch(
        call.route,
        { path: '/chat/completions', body: call.body, requestId: call.requestId, accept: call.stream ? 'text/event-stream' : 'application/json' },
        new ProxyHandler(call, resolve, reject),
      );
    });
  }
}

/** One proxied answer, driven by undici's dispatch callbacks. */
class ProxyHandler implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private status = 0;
  private contentType: string | undefined;
  /** Non-streaming answers and error bodies are collected; streamed ones never are. */
  private chunks: Buffer[] = [];
  private collected = 0;
  private streaming = false;
  private settled = false;
  private readonly onClose = () => {
    if (!this.call.res.writableFinished) this.controller?.abort(new ClientGone());
    this.finish();
  };
  private readonly onDrain = () => this.controller?.resume();

  constructor(
    private readonly call: ProxyCall,
    private readonly resolve: () => void,
    private readonly reject: (err: unknown) => void,
  ) {
    call.res.once('close', this.onClose);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.call.res.destroyed) controller.abort(new ClientGone());
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    const ct = headers['content-type'];
    this.contentType = Array.isArray(ct) ? ct[0] : ct;
    if (statusCode < 400 && this.call.stream) {
      this.streaming = true;
      const head = this.call.head ?? {};
      head['content-type'] = this.contentType ?? 'text/event-stream; charset=utf-8';
      head['cache-control'] = 'no-cache';
      head['x-accel-buffering'] = 'no';
      head['x-request-id'] = this.call.requestId;
      this.call.res.writeHead(statusCode, head);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.streaming) {
      if (!this.call.res.write(chunk)) {
        controller.pause();
        this.call.res.once('drain', this.onDrain);
      }
      return;
    }
    if (this.status >= 400 && this.collected >= MAX_ERROR_BODY_BYTES) return;
    this.chunks.push(chunk);
    this.collected += chunk.length;
  }

  onResponseEnd(): void {
    const { res } = this.call;
    if (this.streaming) {
      res.end();
      return this.finish();
    }
    if (this.status >= 400) return this.fail(passThroughError(this.status, Buffer.concat(this.chunks).toString('utf8')));
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const head: Record<string, string | number> = this.call.head ?? {};
    head['content-type'] = this.contentType ?? 'application/json';
    head['content-length'] = body.length;
    head['x-request-id'] = this.call.requestId;
    res.writeHead(this.status, head);
    res.end(body);
    this.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    const { res } = this.call;
    if (err instanceof ClientGone || res.destroyed) return this.finish();
    if (this.streaming) {
      // Headers are gone: the failure is reported in-band, as one error event, then the end.
      const failure = upstreamFailure(err) ?? new ApiError('upstream_error', 'The model upstream stream failed');
      res.end(`data: ${JSON.stringify(failure.toEnvelope())}\n\n`);
      return this.finish();
    }
    this.fail(upstreamFailure(err, this.call.route.base_url) ?? new ApiError('upstream_error', `The model upstream failed: ${err.message}`));
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.call.res.off('close', this.onClose);
    this.call.res.off('drain', this.onDrain);
    this.resolve();
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.call.res.off('close', this.onClose);
    this.reject(err);
  }
}

/** Upstream 4xx/5xx: same status, its OpenAI envelope kept when it sent one, wrapped in one otherwise. */
function passThroughError(status: number, text: string): ApiError {
  const fallbackType = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const e = (parsed as { error?: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } } | undefined)?.error;
  if (e && typeof e === 'object') {
    return new ApiError(
      typeof e.code === 'string' ? e.code : 'upstream_error',
      typeof e.message === 'string' ? e.message : `The model upstream answered ${status}`,
      typeof e.param === 'string' ? e.param : null,
      { status, type: typeof e.type === 'string' ? e.type : fallbackType },
    );
  }
  const detail = text.trim().slice(0, 500);
  return new ApiError('upstream_error', `The model upstream answered ${status}${detail ? `: ${detail}` : ''}`, null, { status, type: fallbackType });
}
