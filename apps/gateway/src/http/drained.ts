import type { ServerResponse } from 'node:http';

/**
 * Settles once a streamed answer's socket, full at the last write, has drained, or has closed (a
 * client gone never drains: its close ends the wait, so no loop is held by it).
 */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
