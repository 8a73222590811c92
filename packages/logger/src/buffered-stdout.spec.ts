import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { bufferedStdout } from './index.js';

// sonic-boom writes through fs.write (its async mode): count the writes to stdout it makes.
const originalWrite = fs.write;
afterEach(() => {
  fs.write = originalWrite;
});

function countStdoutWrites(): { count: () => number } {
  let writes = 0;
  fs.write = ((fd: number, ...rest: unknown[]) => {
    if (fd === 1) writes++;
    return (originalWrite as (...args: unknown[]) => unknown)(fd, ...rest);
  }) as typeof fs.write;
  return { count: () => writes };
}

describe('bufferedStdout', () => {
  it('makes no write while nothing was logged, and flushes a logged line once', async () => {
    const writes = countStdoutWrites();
    const dest = bufferedStdout(20);
    await sleep(200);
    // ~10 flush periods: an idle process does not write (nor wake its loop for a write).
    expect(writes.count()).toBe(0);

    dest.write('');
    await sleep(200);
    expect(writes.count()).toBe(1);
  });
});
