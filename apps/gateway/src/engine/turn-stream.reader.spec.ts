import { Readable } from 'node:stream';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors/api-error.js';
import { readTurnStream, turnOfText } from './turn-stream.reader.js';

const event = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** A body that receives these reads one event-loop turn apart, logging each and its end next to what the reader hands on. */
function bodyOf(reads: string[], log: string[], options: { breakOff?: boolean } = {}): Readable {
  const body = new Readable({ read() {} });
  body.on('end', () => log.push('end'));
  void (async () => {
    for (const [i, read] of reads.entries()) {
      await nextLoopTurn();
      log.push(`read ${i}`);
      body.push(Buffer.from(read));
    }
    await nextLoopTurn();
    if (options.breakOff) body.destroy(new Error('socket hang up'));
    else body.push(null);
  })();
  return body;
}

const logText = (log: string[]) => (deltas: readonly string[]) => {
  log.push(`text ${deltas.join('')}`);
};

describe('readTurnStream', () => {
  it('hands each read’s text on before the next read, and the read holding [DONE] with the body’s end', async () => {
    const log: string[] = [];
    const body = bodyOf([event({ role: 'assistant', content: 'Hel' }), event({ content: 'lo' }) + event({}, 'stop') + 'data: [DONE]\n\n'], log);
    const answer = await readTurnStream(body, new AbortController().signal, logText(log));
    // issue 20: the answer's last text leaves with the finish the loop writes right after, in one client write.
    expect(log).toEqual(['read 0', 'text Hel', 'read 1', 'end', 'text lo']);
    expect(answer).toEqual({ content: 'Hello', finishReason: 'stop', toolCalls: [], usage: { prompt_tokens: 0, completion_tokens: 0 } });
  });

  it('still streams text that comes before [DONE] in reads of its own, and joins tool calls and usage', async () => {
    const log: string[] = [];
    const reads = [
      event({ content: 'a' }),
      event({ content: 'b' }) + event({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'web_', arguments: '{"q":' } }] }),
      event({ tool_calls: [{ index: 0, function: { name: 'search', arguments: '"x"}' } }] }) + event({}, 'tool_calls'),
      `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } })}\n\ndata: [DONE]\n\n`,
    ];
    const answer = await readTurnStream(bodyOf(reads, log), new AbortController().signal, logText(log));
    expect(log).toEqual(['read 0', 'text a', 'read 1', 'text b', 'read 2', 'read 3', 'end']);
    expect(answer).toEqual({
      content: 'ab',
      finishReason: 'tool_calls',
      toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'web_search', arguments: '{"q":"x"}' } }],
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    });
  });

  it('hands tool-call pieces on as they come, after the same read’s text, each with its call’s index (only when asked for)', async () => {
    const log: string[] = [];
    const call = (index: number, fn: object, id?: string) => event({ tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: fn }] });
    const reads = [
      event({ content: 'Checking.' }) + call(0, { name: 'get_weather', arguments: '' }, 'a') + call(0, { arguments: '{"city":' }),
      call(0, { arguments: '"Oslo"}' }) + call(1, { name: 'get_time', arguments: '{}' }, 'b') + event({}, 'tool_calls') + 'data: [DONE]\n\n',
    ];
    const answer = await readTurnStream(bodyOf(reads, log), new AbortController().signal, logText(log), undefined, (pieces) => {
      log.push(`calls ${JSON.stringify(pieces)}`);
    });
    expect(log).toEqual([
      'read 0',
      'text Checking.',
      `calls ${JSON.stringify([
        { index: 0, id: 'a', name: 'get_weather' },
        { index: 0, arguments: '{"city":' },
      ])}`,
      'read 1',
      'end',
      `calls ${JSON.stringify([
        { index: 0, arguments: '"Oslo"}' },
        { index: 1, id: 'b', name: 'get_time', arguments: '{}' },
      ])}`,
    ]);
    expect(answer.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['a', 'get_weather', '{"city":"Oslo"}'],
      ['b', 'get_time', '{}'],
    ]);
  });

  it('reads nothing more while the client’s socket is full, and hands on what gathered meanwhile as one', async () => {
    const log: string[] = [];
    let release!: () => void;
    const body = new Readable({ read() {} });
    const reading = readTurnStream(body, new AbortController().signal, (deltas) => {
      log.push(`text ${deltas.join('|')}`);
      if (deltas[0] === 'a') return new Promise<void>((r) => (release = r));
    });
    body.push(event({ content: 'a' }));
    await nextLoopTurn();
    body.push(event({ content: 'b' }));
    await nextLoopTurn();
    body.push(event({ content: 'c' }));
    body.push('data: [DONE]\n\n');
    body.push(null);
    await nextLoopTurn();
    expect(log).toEqual(['text a']);
    release();
    expect(await reading).toMatchObject({ content: 'abc' });
    expect(log).toEqual(['text a', 'text b|c']);
  });

  it('reads nothing more while tool-call pieces wait on the client’s socket either', async () => {
    const log: string[] = [];
    let release!: () => void;
    const body = new Readable({ read() {} });
    const call = (args: string) => event({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: args } }] });
    const reading = readTurnStream(body, new AbortController().signal, undefined, undefined, (pieces) => {
      log.push(`calls ${pieces.map((p) => p.arguments).join('|')}`);
      if (pieces[0]!.arguments === '{') return new Promise<void>((r) => (release = r));
    });
    body.push(call('{'));
    await nextLoopTurn();
    body.push(call('"x":'));
    await nextLoopTurn();
    body.push(call('1}') + event({}, 'tool_calls'));
    body.push('data: [DONE]\n\n');
    body.push(null);
    await nextLoopTurn();
    expect(log).toEqual(['calls {']);
    release();
    expect((await reading).toolCalls[0]!.function.arguments).toBe('{"x":1}');
    expect(log).toEqual(['calls {', 'calls "x":|1}']);
  });

  it('fails with upstream_error for a body that breaks off, and for an event that is not JSON', async () => {
    const broken = readTurnStream(bodyOf([event({ content: 'a' })], [], { breakOff: true }), new AbortController().signal);
    await expect(broken).rejects.toBeInstanceOf(ApiError);
    await expect(broken).rejects.toMatchObject({ code: 'upstream_error' });
    const notJson = bodyOf(['data: {nope\n\n'], []);
    await expect(readTurnStream(notJson, new AbortController().signal)).rejects.toMatchObject({ code: 'upstream_error', message: expect.stringContaining('not JSON') });
    expect(notJson.destroyed).toBe(true);
  });

  it('rejects with the abort itself once the request is aborted', async () => {
    const abort = new AbortController();
    const body = new Readable({ read() {} });
    const reading = readTurnStream(body, abort.signal);
    const reason = new DOMException('aborted', 'AbortError');
    abort.abort(reason);
    body.destroy(reason);
    await expect(reading).rejects.toBe(reason);
  });

  it('reads nothing after [DONE]: neither text nor a usage that would replace the real one', async () => {
    const usage = (u: object) => `data: ${JSON.stringify({ choices: [], usage: u })}\n\n`;
    const reads = [
      event({ content: 'before' }, 'stop') + usage({ prompt_tokens: 3, completion_tokens: 4 }) + 'data: [DONE]\n\n',
      event({ content: 'AFTER' }) + usage({ prompt_tokens: 999999, completion_tokens: 999999 }),
    ];
    const answer = await readTurnStream(bodyOf(reads, []), new AbortController().signal);
    expect(answer).toMatchObject({ content: 'before', finishReason: 'stop', usage: { prompt_tokens: 3, completion_tokens: 4 } });
  });

  it('fails an answer that ends with neither [DONE] nor a finish reason (cut between events), or that never carried a choice', async () => {
    await expect(readTurnStream(bodyOf([event({ content: 'half an ans' })], []), new AbortController().signal)).rejects.toMatchObject({
      code: 'upstream_error',
      message: expect.stringContaining('ended before it finished'),
    });
    const noChoice = `data: ${JSON.stringify({ foo: 'bar' })}\n\ndata: [DONE]\n\n`;
    await expect(readTurnStream(bodyOf([noChoice], []), new AbortController().signal)).rejects.toMatchObject({
      code: 'upstream_error',
      message: expect.stringContaining('without a message'),
    });
    const notAList = `data: ${JSON.stringify({ choices: 'nope' })}\n\ndata: [DONE]\n\n`;
    await expect(readTurnStream(bodyOf([notAList], []), new AbortController().signal)).rejects.toMatchObject({ code: 'upstream_error' });
    // A finish reason without [DONE] is a whole answer (some servers never send it).
    expect(await readTurnStream(bodyOf([event({ content: 'ok' }, 'stop')], []), new AbortController().signal)).toMatchObject({ content: 'ok' });
  });

  it("reads choice 0 only, keeps finish reasons to the API's own, and takes usage only as counts", async () => {
    const other = `data: ${JSON.stringify({
      choices: [
        { index: 1, delta: { content: 'choice1' } },
        { index: 0, delta: { content: 'choice0' } },
      ],
    })}\n\n`;
    const odd = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'banana' }], usage: { prompt_tokens: '1e9', completion_tokens: -5 } })}\n\ndata: [DONE]\n\n`;
    const answer = await readTurnStream(bodyOf([other, odd], []), new AbortController().signal);
    expect(answer).toEqual({ content: 'choice0', finishReason: 'stop', toolCalls: [], usage: { prompt_tokens: 0, completion_tokens: 0 } });
    const huge = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'length' }], usage: { prompt_tokens: 1e300, completion_tokens: 7 } })}\n\ndata: [DONE]\n\n`;
    expect(await readTurnStream(bodyOf([huge], []), new AbortController().signal)).toMatchObject({ finishReason: 'length', usage: { prompt_tokens: 0, completion_tokens: 7 } });
  });

  it('fails as upstream_timeout an answer that sends only keep-alive comments for longer than its idle bound', async () => {
    const body = new Readable({ read() {} });
    const reading = readTurnStream(body, new AbortController().signal, undefined, 50);
    body.push(event({ content: 'a' }));
    const pinging = setInterval(() => body.push(': ping\n\n'), 10);
    try {
      await expect(reading).rejects.toMatchObject({ code: 'upstream_timeout' });
    } finally {
      clearInterval(pinging);
    }
    expect(body.destroyed).toBe(true);
  });

  it("does not count a full client socket as the upstream's silence", async () => {
    let release!: () => void;
    const body = new Readable({ read() {} });
    const reading = readTurnStream(body, new AbortController().signal, () => new Promise<void>((r) => (release = r)), 30);
    body.push(event({ content: 'a' }));
    // The client's socket stays full for several idle bounds; the upstream has sent all it has.
    await new Promise((r) => setTimeout(r, 150));
    body.push(event({}, 'stop') + 'data: [DONE]\n\n');
    body.push(null);
    release();
    expect(await reading).toMatchObject({ content: 'a', finishReason: 'stop' });
  });
});

describe('turnOfText: a whole answer', () => {
  it('reads a completion, and a stream from a server that ignored stream: false', async () => {
    const completion = JSON.stringify({ choices: [{ index: 0, message: { content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 1 } });
    expect(await turnOfText(completion, new AbortController().signal)).toMatchObject({ content: 'hi', finishReason: 'stop', usage: { prompt_tokens: 2, completion_tokens: 1 } });
    const streamed = `${event({ content: 'h' })}${event({ content: 'i' }, 'stop')}data: [DONE]\n\n`;
    expect(await turnOfText(streamed, new AbortController().signal)).toMatchObject({ content: 'hi', finishReason: 'stop' });
  });

  it('fails a completion with no choice, and takes only counts as usage', async () => {
    await expect(turnOfText(JSON.stringify({ foo: 'bar', choices: [] }), new AbortController().signal)).rejects.toMatchObject({
      code: 'upstream_error',
      message: expect.stringContaining('without a message'),
    });
    await expect(turnOfText(JSON.stringify({ choices: 'nope' }), new AbortController().signal)).rejects.toMatchObject({ code: 'upstream_error' });
    const odd = JSON.stringify({ choices: [{ message: { content: 'x' }, finish_reason: 'banana' }], usage: { prompt_tokens: '01e9', completion_tokens: -1 } });
    expect(await turnOfText(odd, new AbortController().signal)).toMatchObject({ finishReason: 'stop', usage: { prompt_tokens: 0, completion_tokens: 0 } });
  });
});

describe('reading a stream costs time linear in its bytes, whatever its line endings', () => {
  /**
   * Characters String.prototype.indexOf searched in `text` while `run` read it (the SSE parser finds
   * each line's end with it; a whole answer is one chunk). Only searches of `text` itself count:
   * the test runner's own, meanwhile, are not the reader's.
   */
  async function searched(text: string, run: () => Promise<unknown>): Promise<number> {
    const original = Object.getOwnPropertyDescriptor(String.prototype, 'indexOf')!;
    const indexOf = original.value as (this: string, search: string, from?: number) => number;
    let total = 0;
    String.prototype.indexOf = function (this: string, search: string, from?: number) {
      const start = Math.max(0, from ?? 0);
      const at = indexOf.call(this, search, start);
      if (this.length === text.length) total += (at === -1 ? this.length : at + search.length) - start;
      return at;
    };
    try {
      await run();
    } finally {
      Object.defineProperty(String.prototype, 'indexOf', original);
    }
    return total;
  }

  it.each([
    ['ordinary events and one trailing CR', `${event({ content: 'x' }).repeat(4_000)}data: [DONE]\n\n\r`],
    ['a CR, then only line feeds', `data: [DONE]\r${'\n'.repeat(200_000)}`],
    ['CR line endings throughout', `${event({ content: 'x' }).replaceAll('\n', '\r').repeat(4_000)}data: [DONE]\r\r`],
  ])('%s: searched a small multiple of the answer (eventsource-parser 3 searched to the end for every line once a CR came: 1 MiB took 5 s)', async (_shape, text) => {
    const total = await searched(text, () => turnOfText(text, new AbortController().signal).catch(() => undefined));
    expect(total).toBeLessThan(text.length * 4);
  });
});
