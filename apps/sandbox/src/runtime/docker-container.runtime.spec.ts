import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '@drael/logger';
import { configSchema } from '../config/config.schema.js';
import { DockerContainerRuntime } from './docker-container.runtime.js';

/*
 * An engine that accepts the create but answers with a warning (what Docker does when it drops a
 * limit the kernel cannot apply). It speaks the Engine API over a real unix socket; the real
 * engine never returns warnings for our spec on this machine, so this is how the refusal is tested.
 */
describe('DockerContainerRuntime against an engine that drops a limit', () => {
  let dir: string;
  let server: Server;
  const calls: string[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drael-fake-engine-'));
    calls.length = 0;
    server = createServer((req, res) => {
      calls.push(`${req.method} ${req.url?.replace(/^\/v[\d.]+/, '').split('?')[0]}`);
      req.resume();
      if (req.method === 'POST' && req.url?.includes('/containers/create')) {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ Id: 'c0ffee', Warnings: ['Your kernel does not support swap limit capabilities. Limitation discarded.'] }));
        return;
      }
      if (req.method === 'DELETE') {
        res.writeHead(204);
        res.end();
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'not in this fake' }));
    });
    await new Promise<void>((r) => server.listen(join(dir, 'docker.sock'), r));
  });

  afterEach(async () => {
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses the run with runtime_unavailable, removes the container and never starts it', async () => {
    const config = configSchema.parse({ DOCKER_SOCKET: join(dir, 'docker.sock'), SANDBOX_STATE_DIR: join(dir, 'state'), SANDBOX_WARM_POOL: '0' });
    const runtime = new DockerContainerRuntime(config, createLogger('sandbox-test', 'silent'));
    await runtime.removeLeftovers().catch(() => undefined);
    const run = runtime.run({
      runtime: 'python',
      code: 'print(1)',
      workspace: { kind: 'own' },
      network: false,
      timeoutMs: 5_000,
      maxStreamBytes: 1024,
    });
    await expect(run).rejects.toMatchObject({ code: 'runtime_unavailable', message: expect.stringContaining('swap limit') });
    expect(calls).toContain('POST /containers/create');
    expect(calls).toContain('DELETE /containers/c0ffee');
    expect(calls.some((c) => c.includes('/start'))).toBe(false);
    await runtime.close();
  });
});

/*
 * An engine that runs the launcher's part faithfully (the program's output, then the end marks on
 * stdout and stderr) but never reports the container's exit: a real engine's exit report comes
 * 80-200 ms after the program has ended on a busy machine, and no real engine can be made to hold
 * it back, so this is how "the answer does not wait for it" is tested.
 */
describe('DockerContainerRuntime against an engine slow to report the exit', () => {
  let dir: string;
  let server: Server;
  const calls: string[] = [];
  const upgraded = new Set<Duplex>();
  const frame = (type: 1 | 2, text: string) => {
    const payload = Buffer.from(text);
    const header = Buffer.alloc(8);
    header[0] = type;
    header.writeUInt32BE(payload.length, 4);
    return Buffer.concat([header, payload]);
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drael-fake-engine-'));
    calls.length = 0;
    server = createServer((req, res) => {
      const path = req.url?.replace(/^\/v[\d.]+/, '').split('?')[0] ?? '';
      calls.push(`${req.method} ${path}`);
      req.resume();
      if (req.method === 'POST' && path === '/containers/create') {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ Id: 'c0ffee', Warnings: [] }));
      } else if (req.method === 'POST' && path.endsWith('/wait')) {
        // Never answered: the exit is not reported.
      } else if (req.method === 'GET' && path === '/containers/json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[]');
      } else {
        res.writeHead(204);
        res.end();
      }
    });
    server.on('upgrade', (req, socket) => {
      calls.push(`${req.method} ${req.url?.replace(/^\/v[\d.]+/, '').split('?')[0]}`);
      upgraded.add(socket);
      socket.write('HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
      let line = '';
      socket.on('data', (chunk: Buffer) => {
        line += chunk.toString();
        const m = /^run (\S+) \d+\n/.exec(line);
        if (!m) return;
        // The program's output, then the launcher's marks (exit status 0).
        socket.write(Buffer.concat([frame(1, 'out\n'), frame(2, 'err\n'), frame(1, `${m[1]} 0\n`), frame(2, `${m[1]} 0\n`)]));
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(join(dir, 'docker.sock'), r));
  });

  afterEach(async () => {
    for (const s of upgraded) s.destroy();
    upgraded.clear();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it("answers once the launcher's end marks have come, with the program's output only, before the engine reports the exit", async () => {
    const config = configSchema.parse({ DOCKER_SOCKET: join(dir, 'docker.sock'), SANDBOX_STATE_DIR: join(dir, 'state'), SANDBOX_WARM_POOL: '0' });
    const runtime = new DockerContainerRuntime(config, createLogger('sandbox-test', 'silent'));
    await runtime.removeLeftovers();
    const result = await runtime.run({ runtime: 'python', code: 'print(1)', workspace: { kind: 'own' }, network: false, timeoutMs: 60_000, maxStreamBytes: 1024 });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, oomKilled: false, truncated: { stdout: false, stderr: false } });
    expect(result.stdout.toString()).toBe('out\n');
    expect(result.stderr.toString()).toBe('err\n');
    // The exit was never reported, and the container is still removed.
    expect(calls.filter((c) => c.endsWith('/wait'))).toHaveLength(1);
    await runtime.close();
    expect(calls).toContain('DELETE /containers/c0ffee');
  });
});
