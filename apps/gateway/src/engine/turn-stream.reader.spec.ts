import { describe, expect, it } from 'vitest';
import { readTurnStream } from './turn-stream.reader.js';

const event = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** A body of these reads, logging each read and its end next to what the reader hands on. */
function bodyOf(reads: string[], log: string[]): AsyncIterable<unknown> & { destroy(): void } {
  return {
    async *[Symbol.asyncIterator]() {
      for (const [i, read] of reads.entries()) {
        log.push(`read ${i}`);
        yield Buffer.from(read);
      }
      log.push('end');
    },
    destroy() {},
  };
}

describe('readTurnStream', () => {
  it('hands each read’s text on before the next read, and the read holding [DONE] with the body’s end', async () => {
    const log: string[] = [];
    const body = bodyOf([event({ role: 'assistant', content: 'Hel' }), event({ content: 'lo' }) + event({}, 'stop') + 'data: [DONE]\n\n'], log);
    const answer = await readTurnStream(body, new AbortController().signal, (deltas) => {
      log.push(`text ${deltas.join('')}`);
    });
    // issue 20: the answer's last text leaves with the finish the loop writes right after, in one client write.
    expect(log).toEqual(['read 0', 'text Hel', 'read 1', 'end', 'text lo']);
    expect(answer).toMatchObject({ content: 'Hello', finishReason: 'stop', toolCalls: [] });
  });

  it('still streams text that comes before [DONE] in reads of its own', async () => {
    const log: string[] = [];
    const body = bodyOf([event({ content: 'a' }), event({ content: 'b' }), event({}, 'stop'), 'data: [DONE]\n\n'], log);
    await readTurnStream(body, new AbortController().signal, (deltas) => {
      log.push(`text ${deltas.join('')}`);
    });
    expect(log).toEqual(['read 0', 'text a', 'read 1', 'text b', 'read 2', 'read 3', 'end']);
  });
});
