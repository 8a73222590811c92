import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { startLoopHarness, type LoopHarness } from './turn-loop.support.js';

/*
 * F5 (multi-replica fault pass), end to end: the gateway is killed while it sends a client's upload
 * to the sandbox in pieces. The file at the path used to be whatever pieces had landed (the first
 * replaced it, the rest appended); now it keeps its old content, nothing of the cut upload is
 * listed, and its staged bytes go once no piece came for SANDBOX_UPLOAD_ABANDONED_S. What the
 * session holds is read straight from the sandbox, over NATS: the gateway is dead.
 */
let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness({ services: ['sandbox'], serviceEnv: { sandbox: { SANDBOX_UPLOAD_ABANDONED_S: '2' } } });
}, 180_000);
afterAll(async () => {
  await h?.close();
});

describe('a gateway killed in the middle of an upload', () => {
  it('leaves the old file whole and nothing of the cut upload listed; its staged bytes go after the abandon time', { timeout: 120_000 }, async () => {
    const session = `cut${Date.now()}`;
    const scope = { tenant: h.key.account_id, session };
    const url = `${h.gateway.url}/v1/sessions/${session}/files/data.bin`;
    const headers = { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/octet-stream' };
    expect((await fetch(url, { method: 'PUT', headers, body: Buffer.from('old and whole\n') })).status).toBe(200);
    const base = (await h.nats.request(sandboxCatalog.filesList, scope)).used_bytes;

    // Just under the body limit (32 MiB): some 60 pieces, so the gateway is caught between two.
    const upload = fetch(url, { method: 'PUT', headers, body: randomBytes(31 * 1024 * 1024) }).then(
      (r) => r.status,
      () => 'cut',
    );
    let landed = 0;
    for (const deadline = Date.now() + 60_000; landed < 2 * 1024 * 1024 && Date.now() < deadline; ) {
      landed = (await h.nats.request(sandboxCatalog.filesList, scope)).used_bytes - base;
    }
    expect(landed).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    h.gateway.child.kill('SIGKILL');
    expect(await upload).toBe('cut');

    const read = await h.nats.request(sandboxCatalog.filesRead, { ...scope, path: 'data.bin' });
    expect(Buffer.from(read.content_base64, 'base64').toString()).toBe('old and whole\n');
    const listing = await h.nats.request(sandboxCatalog.filesList, scope);
    expect(listing.files.map((f) => [f.path, f.size])).toEqual([['data.bin', 'old and whole\n'.length]]);
    // The room the cut upload took comes back once it is abandoned (the sandbox's sweep at the next listing).
    await expect.poll(async () => (await h.nats.request(sandboxCatalog.filesList, scope)).used_bytes - base, { timeout: 15_000, interval: 500 }).toBeLessThan(512 * 1024);
  });
});
