// Starts a load generator as a child process (its CPU is nobody's under test) and runs loads
// through it over IPC: autocannon (load-generator.mjs) for request/response loads, or the
// streaming generator (stream-load-generator.mjs) that reads and judges every stream.
import { fork } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Forks `file`, waits for its { ready }, and returns a `send(message, onSample)` that resolves with its answer. */
async function forkGenerator(file) {
  const child = fork(resolve(here, file), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((r, j) => {
    child.once('message', r);
    child.once('exit', (code) => j(new Error(`${file} exited with ${code}`)));
  });
  let seq = 0;
  const waiting = new Map();
  child.on('message', (m) => {
    const w = waiting.get(m.id);
    if (!w) return;
    if (m.sample) return w.onSample?.(m.sample);
    waiting.delete(m.id);
    w.resolve(m.result ?? m);
  });
  return {
    child,
    send(message, onSample) {
      const id = ++seq;
      return new Promise((resolve) => {
        waiting.set(id, { resolve, onSample });
        child.send({ ...message, id });
      });
    },
  };
}

export async function startLoadGenerator() {
  const gen = await forkGenerator('load-generator.mjs');
  return {
    pid: gen.child.pid,
    child: gen.child,
    /** One load; rejects when any request failed (a bench of failing requests measures nothing). */
    async run(opts) {
      const result = await gen.send(opts);
      if (result.non2xx || result.errors || result.timeouts || (opts.amount !== undefined && result.requests < opts.amount)) {
        throw new Error(
          `load on ${opts.url}: ${result.requests}/${opts.amount ?? 'as many as'} answered, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts; statuses ${JSON.stringify(result.statuses)}`,
        );
      }
      return result;
    },
    close: () => gen.child.kill('SIGTERM'),
  };
}

/**
 * The streaming generator. `run({ url, headers, body, connections, durationMs, rampMs, expectText }, onSample)`
 * resolves with every stream's verdict and timings (dropped streams are counted, not thrown: a
 * load bench reports them); `onSample({ open })` is called every 250 ms while it runs.
 */
export async function startStreamLoad() {
  const gen = await forkGenerator('stream-load-generator.mjs');
  return {
    pid: gen.child.pid,
    child: gen.child,
    run: (opts, onSample) => gen.send(opts, onSample),
    close: () => gen.child.kill('SIGTERM'),
  };
}
