// Starts bench/lib/load-generator.mjs (autocannon) as a child process and runs loads through it.
import { fork } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export async function startLoadGenerator() {
  const child = fork(resolve(here, 'load-generator.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((r, j) => {
    child.once('message', r);
    child.once('exit', (code) => j(new Error(`load generator exited with ${code}`)));
  });
  let seq = 0;
  const waiting = new Map();
  child.on('message', (m) => {
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  });
  return {
    pid: child.pid,
    child,
    /** One load; rejects when any request failed (a bench of failing requests measures nothing). */
    async run(opts) {
      const id = ++seq;
      const result = await new Promise((r) => {
        waiting.set(id, r);
        child.send({ id, ...opts });
      });
      if (result.non2xx || result.errors || result.timeouts || result.requests < opts.amount) {
        throw new Error(`load on ${opts.url}: ${result.requests}/${opts.amount} answered, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
      }
      return result;
    },
    close: () => child.kill('SIGTERM'),
  };
}
