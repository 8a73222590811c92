import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_TRANSFER_BYTES, sandboxCatalog } from '@drael/contracts';
import { placementKeyOf, placementKv, startSandbox, type Sandbox } from './sandbox-harness.js';

/*
 * A file larger than one message is written in pieces; each piece but the last says `more` and is
 * not saved on its own (a save re-reads and stores the whole file: piece by piece, an upload cost
 * the square of its size). The last piece's save holds the whole file: the replica that takes the
 * session over when its holder dies restores all of it.
 */
const env = { SANDBOX_REPLICA_TTL_S: '3', SANDBOX_SESSION_QUOTA_MB: '64', SANDBOX_WARM_POOL: '0' };
let a: Sandbox;
let b: Sandbox;
beforeAll(async () => {
  a = await startSandbox(env);
  b = await startSandbox(env, { join: a });
}, 180_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

describe('an upload in pieces', () => {
  it('is saved whole with its last piece: the replica that takes the session over serves every byte', async () => {
    const ws = { tenant: 'pieces', session: 'upload' };
    const content = randomBytes(3 * MAX_FILE_TRANSFER_BYTES + 1234);
    const pieces = [];
    for (let at = 0; at < content.length; at += MAX_FILE_TRANSFER_BYTES) pieces.push(content.subarray(at, at + MAX_FILE_TRANSFER_BYTES));
    let size = 0;
    for (const [i, piece] of pieces.entries()) {
      const more = i < pieces.length - 1;
      const written = await a.client.request(sandboxCatalog.filesWrite, {
        ...ws,
        path: 'data/upload.bin',
        content_base64: piece.toString('base64'),
        ...(i > 0 ? { append: true } : {}),
        ...(more ? { more: true } : {}),
      });
      size = written.size;
    }
    expect(size).toBe(content.length);

    // The holder dies; the other replica takes the session over from its last save.
    const { kv, nc } = await placementKv(a.prefix);
    const holderId = (JSON.parse((await kv.get(placementKeyOf(ws.tenant, ws.session)))!.string()) as { holder: string }).holder;
    await nc.close();
    const holder = new RegExp(`^${b.instance}-[0-9a-f]{8}$`).test(holderId) ? b : a;
    const survivor = holder === a ? b : a;
    await holder.proc.stop('SIGKILL');

    const read: Buffer[] = [];
    for (let offset = 0; offset < content.length; ) {
      let piece: { content_base64: string; truncated: boolean } | undefined;
      for (let i = 0; i < 120 && !piece; i++) {
        piece = await survivor.client.request(sandboxCatalog.filesRead, { ...ws, path: 'data/upload.bin', offset }).catch(async () => {
          await new Promise((r) => setTimeout(r, 250));
          return undefined;
        });
      }
      const bytes = Buffer.from(piece!.content_base64, 'base64');
      read.push(bytes);
      offset += bytes.length;
      if (!piece!.truncated) break;
    }
    expect(Buffer.concat(read).equals(content)).toBe(true);
  }, 240_000);
});
