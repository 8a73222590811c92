// One built service (apps/<app>/dist/main.js of this checkout, or of another build's `dir`) in a
// process of its own on a bench's NATS prefix, ready once it answers `<app>.health.v1`; a typed
// client on the same prefix comes with it. stop() closes the client and ends the process
// (SIGTERM, SIGKILL after 5 s: a profiled process writes its profile while exiting).
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { NATS_URL, root } from './stack-env.mjs';

const { NatsRpcClient } = await import(resolve(root, 'packages/nats-rpc/dist/index.js'));
const { healthEntry } = await import(resolve(root, 'packages/contracts/dist/index.js'));

export async function startService({ app, prefix, dir = resolve(root, 'apps', app), env = {}, nodeArgs = [] }) {
  const child = spawn(process.execPath, [...nodeArgs, 'dist/main.js'], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'warn', NATS_URL, DRAEL_NATS_PREFIX: prefix, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  for (let i = 0; ; i++) {
    try {
      await client.request(healthEntry(app), {}, { timeoutMs: 500 });
      break;
    } catch {
      if (i > 600 || child.exitCode !== null) {
        child.kill('SIGKILL');
        await client.close();
        throw new Error(`${app} did not start`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    child,
    client,
    async stop() {
      await client.close();
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
