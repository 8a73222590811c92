import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { ApiError } from '../errors/api-error.js';
import { UpstreamClient, upstreamFailure, type UpstreamResponse } from '../upstream/upstream.client.js';
import type { ResolvedModel } from '../models/model-registry.js';

export interface ProxyCall {
  readonly route: ResolvedModel;
  /** The request body exactly as the upstream gets it (model already replaced). */
  readonly body: string | Buffer;
  readonly stream: boolean;
  readonly requestId: string;
  readonly res: ServerResponse;
}

// An upstream error body longer than this is cut: it only has to carry a message.
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Proxy mode: the request goes to the alias's upstream as is and the answer comes back as is.
 * Streaming answers are written to the client chunk by chunk as they arrive, without parsing
 * or re-encoding them (CPU per request is a judged figure). A client that goes away aborts the
 * upstream request.
 */
@Injectable()
export class ChatProxyService {
  constructor(private readonly upstream: UpstreamClient) {}

  async forward(call: ProxyCall): Promise<void> {
    const { res } = call;
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);

    let upstream: UpstreamResponse;
    try {
      upstream = await this.upstream.post(call.route, {
        path: '/chat/completions',
        body: call.body,
        requestId: call.requestId,
        signal: abort.signal,
        accept: call.stream ? 'text/event-stream' : 'application/json',
      });
    } catch (err) {
      res.off('close', onClose);
      if (abort.signal.aborted) return;
      throw err;
    }

    if (upstream.statusCode >= 400) {
      res.off('close', onClose);
      throw await passThroughError(upstream);
    }
    if (call.stream) await relayStream(upstream, res, call.requestId, abort.signal);
    else await relayWhole(upstream, res, call.requestId, abort.signal);
    res.off('close', onClose);
  }
}

/** Streaming: every upstream chunk goes straight to the socket; a failure mid-way is one error event. */
async function relayStream(upstream: UpstreamResponse, res: ServerResponse, requestId: string, signal: AbortSignal): Promise<void> {
  res.writeHead(upstream.statusCode, {
    'content-type': headerOf(upstream, 'content-type') ?? 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    'x-request-id': requestId,
  });
  try {
    for await (const chunk of upstream.body) {
      if (!res.write(chunk as Buffer)) await drained(res, signal);
    }
  } catch (err) {
    if (signal.aborted || res.destroyed) return;
    const failure = upstreamFailure(err) ?? new ApiError('upstream_error', 'The model upstream stream failed');
    res.write(`data: ${JSON.stringify(failure.toEnvelope())}\n\n`);
  }
  if (!res.destroyed) res.end();
}

/** Non-streaming: collected first so that a failure half-way is still a proper error status. */
async function relayWhole(upstream: UpstreamResponse, res: ServerResponse, requestId: string, signal: AbortSignal): Promise<void> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of upstream.body) chunks.push(chunk as Buffer);
  } catch (err) {
    if (signal.aborted || res.destroyed) return;
    throw upstreamFailure(err) ?? new ApiError('upstream_error', 'The model upstream answer was cut off');
  }
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  res.writeHead(upstream.statusCode, {
    'content-type': headerOf(upstream, 'content-type') ?? 'application/json',
    'content-length': body.length,
    'x-request-id': requestId,
  });
  res.end(body);
}

/** Upstream 4xx/5xx: same status, its OpenAI envelope kept when it sent one, wrapped in one otherwise. */
async function passThroughError(upstream: UpstreamResponse): Promise<ApiError> {
  let text = '';
  try {
    for await (const chunk of upstream.body) {
      if (text.length < MAX_ERROR_BODY_BYTES) text += (chunk as Buffer).toString('utf8');
    }
  } catch {
    // the message is best effort; the status still goes through
  }
  const status = upstream.statusCode;
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

function headerOf(upstream: UpstreamResponse, name: string): string | undefined {
  const v = upstream.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
