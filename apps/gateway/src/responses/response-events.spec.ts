import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../auth/identity.js';
import { ModelTurnEngine } from '../engine/model-turn.engine.js';
import type { ResolvedModel } from '../models/model-registry.js';
import type { UpstreamClient } from '../upstream/upstream.client.js';
import type { WebToolsPort } from './hosted/web-tools.port.js';
import { ResponseEvents, SseWriter } from './response-events.js';
import { ResponseLoopService } from './response-loop.service.js';
import { newResponse } from './response-object.js';
import { ToolSet } from './tool-set.js';

const MiB = 1024 * 1024;
const event = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

/** An upstream streaming `bytes` of text, 64 KiB a read, counting what the gateway has taken of it. */
function upstreamOf(bytes: number) {
  const taken = { bytes: 0 };
  const read = event('x').repeat(Math.floor(65_536 / event('x').length));
  const reads = Math.ceil(bytes / read.length);
  function* body() {
    for (let i = 0; i < reads; i++) {
      taken.bytes += read.length;
      yield Buffer.from(read);
    }
    yield Buffer.from(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
  }
  const client = {
    post: () =>
      Promise.resolve({
        deployment: { name: 'd', alias: 'm' },
        headers: { 'content-type': 'text/event-stream' },
        statusCode: 200,
        body: Readable.from(body(), { objectMode: false }),
      }),
    answerIdleMs: () => 60_000,
    recordUsage: () => undefined,
  };
  return { client: client as unknown as UpstreamClient, taken, text: reads * Math.floor(65_536 / event('x').length) };
}

/** A client's response whose socket is always full (it never reads): every write is queued, and counted. */
function fullSocket() {
  const res = Object.assign(new EventEmitter(), {
    queued: 0,
    /** The text deltas written, in order. */
    deltas: [] as string[],
    destroyed: false,
    writableEnded: false,
    closed: false,
    writeHead: () => res,
    write: (chunk: string) => {
      res.queued += Buffer.byteLength(chunk);
      if (chunk.startsWith('event: response.output_text.delta\n')) res.deltas.push((JSON.parse(chunk.slice(chunk.indexOf('\ndata: ') + 7)) as { delta: string }).delta);
      return false;
    },
    end: () => ((res.writableEnded = true), res),
  });
  return res;
}

function runFor(upstreamBytes: number) {
  const upstream = upstreamOf(upstreamBytes);
  const res = fullSocket();
  // As ResponsesService wires them.
  const sse = new SseWriter(res as unknown as ServerResponse, 'req', () => undefined);
  const response = newResponse({ model: 'm', stream: true });
  const run = new ResponseLoopService(new ModelTurnEngine(upstream.client), {} as WebToolsPort).run({
    response,
    route: { alias: 'm' } as ResolvedModel,
    toolSet: ToolSet.from([]),
    toolChoice: undefined,
    instructions: null,
    history: [{ role: 'user', content: 'hi' }],
    loaded: new Map(),
    includeSources: false,
    caller: { account_id: 'a', tool_level: 'l1_http' } as Caller,
    requestId: 'req',
    signal: new AbortController().signal,
    events: new ResponseEvents((e) => sse.write(e)),
    onUpstreamAccepted: () => sse.open(),
    toolCallLimit: 8,
  });
  let settled = false;
  void run.then(
    () => (settled = true),
    () => (settled = true),
  );
  /** Until the loop waits on the socket (or has ended without ever waiting). */
  const held = async () => {
    while (!settled && res.listenerCount('drain') === 0) await nextLoopTurn();
    return !settled;
  };
  return { run, res, upstream, response, held };
}

describe('a streamed response to a client that does not read', () => {
  it('queues one read of the upstream at a time, and reads the next only once the socket drains', async () => {
    const r = runFor(16 * MiB);
    expect(await r.held()).toBe(true);
    // A 64 KiB upstream read is 840 deltas, some 200 KiB of events; the body's stream buffers a read
    // or two ahead. Without backpressure all 16 MiB were read and ~64 MiB queued.
    expect(r.upstream.taken.bytes).toBeLessThanOrEqual(4 * 65_536);
    expect(r.res.queued).toBeLessThan(MiB);
    const queued = r.res.queued;
    r.res.emit('drain');
    expect(await r.held()).toBe(true);
    expect(r.res.queued).toBeGreaterThan(queued);
    expect(r.upstream.taken.bytes).toBeLessThanOrEqual(5 * 65_536);
  });

  it('a client that goes away lets the loop finish, nothing more queued for it', async () => {
    const r = runFor(4 * MiB);
    expect(await r.held()).toBe(true);
    r.res.destroyed = true;
    r.res.closed = true;
    const queued = r.res.queued;
    r.res.emit('close');
    await r.run;
    expect(r.response.status).toBe('completed');
    expect(r.res.queued).toBe(queued);
  });

  it('every delta still reaches the client, in order, as it drains', async () => {
    const r = runFor(MiB);
    let settled = false;
    void r.run.then(() => (settled = true));
    while (!settled) {
      await r.held();
      r.res.emit('drain');
      await nextLoopTurn();
    }
    expect(r.res.deltas.join('')).toBe('x'.repeat(r.upstream.text));
  });
});
