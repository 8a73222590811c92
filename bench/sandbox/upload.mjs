// bench/sandbox/upload.mjs: how long a session file upload takes through the sandbox, by size,
// written as the gateway writes it (PUT /v1/sessions/{id}/files/{path}): pieces of one NATS
// message (MAX_FILE_TRANSFER_BYTES), the first replacing the file, the rest appending, each but
// the last saying `more` (saved once, with the last piece). `--every-piece` sends no `more`, so
// each piece is saved on its own, as before 2026-12-02: a save re-reads and stores the whole file,
// so that cost grows with the square of the size.
// Usage: node bench/sandbox/upload.mjs [--sizes 1,4,16,32] [--every-piece] [--rounds 2]
// Needs NATS, Docker and the built sandbox (pnpm build); starts its own sandbox service.
import '../lib/ends-with-bench.mjs';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { MAX_FILE_TRANSFER_BYTES, sandboxCatalog } from '../../packages/contracts/dist/index.js';
import { startSandboxService } from '../lib/sandbox-service.mjs';
import { numberOption, option } from '../lib/cli-options.mjs';

const sizesMiB = option('sizes', '1,4,16,32').split(',').map(Number);
const rounds = numberOption('rounds', 2);
const everyPiece = process.argv.includes('--every-piece');

const sandbox = await startSandboxService({ instance: `bench-upload-${process.pid}`, env: { SANDBOX_SESSION_QUOTA_MB: '256', SANDBOX_WARM_POOL: '0' } });
try {
  console.log(
    `bench/sandbox/upload (${new Date().toISOString()}, node ${process.version}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${everyPiece ? 'each piece saved' : 'saved with the last piece'})`,
  );
  for (const mib of sizesMiB) {
    const content = randomBytes(mib * 1024 * 1024);
    const times = [];
    for (let r = 0; r < rounds; r++) {
      const scope = { tenant: 'bench', session: `upload-${mib}-${r}` };
      const started = performance.now();
      for (let at = 0; at < content.length; at += MAX_FILE_TRANSFER_BYTES) {
        const more = !everyPiece && at + MAX_FILE_TRANSFER_BYTES < content.length;
        await sandbox.client.request(sandboxCatalog.filesWrite, {
          ...scope,
          path: 'upload.bin',
          content_base64: content.subarray(at, at + MAX_FILE_TRANSFER_BYTES).toString('base64'),
          ...(at > 0 ? { append: true } : {}),
          ...(more ? { more: true } : {}),
        });
      }
      times.push(performance.now() - started);
      await sandbox.client.request(sandboxCatalog.workspaceDelete, scope);
    }
    console.log(`${String(mib).padStart(4)} MiB: ${times.map((t) => `${(t / 1000).toFixed(2)} s`).join(', ')}`);
  }
} finally {
  await sandbox.stop();
}
