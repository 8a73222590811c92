import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
