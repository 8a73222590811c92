import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_TRANSFER_BYTES, sandboxCatalog } from '@drael/contracts';
import { b64, placementKeyOf, placementKv, startSandbox, unb64, type Sandbox } from './sandbox-harness.js';

/*
 * F5 (multi-replica fault pass): a file larger than one message is written in pieces. The first
 * piece used to replace the file and the others to append to it, so a sender that died (or a
 * piece that failed) between two pieces left a truncated file under the file's name, which the
 * session's next change saved. Now the pieces of one upload gather in a staging file the path's
 * readers never see, and the last piece puts the whole file in place at once.
 */
const env = { SANDBOX_REPLICA_TTL_S: '3', SANDBOX_SESSION_QUOTA_MB: '64', SANDBOX_WARM_POOL: '0', SANDBOX_UPLOAD_ABANDONED_S: '2' };
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

type Ws = { tenant: string; session: string };

/** Sends the first `count` pieces of `content` as one upload, as the gateway does, then stops (its sender died). */
async function sendPieces(ws: Ws, path: string, content: Buffer, upload: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const at = i * MAX_FILE_TRANSFER_BYTES;
    await a.call(sandboxCatalog.filesWrite, {
      ...ws,
      path,
      upload,
      content_base64: content.subarray(at, at + MAX_FILE_TRANSFER_BYTES).toString('base64'),
      ...(i > 0 ? { append: true } : {}),
      more: true,
    });
  }
}

const listing = (ws: Ws) => a.call(sandboxCatalog.filesList, ws);
const readText = async (ws: Ws, path: string) => unb64((await a.call(sandboxCatalog.filesRead, { ...ws, path })).content_base64);

describe('an upload in pieces cut off before its last piece', () => {
  it('leaves the old file whole, unlisted staging, nothing saved of it; its room comes back once it is abandoned', async () => {
    const ws = { tenant: 'atomic', session: `cut${Date.now()}` };
    await a.call(sandboxCatalog.filesWrite, { ...ws, path: 'data/report.csv', content_base64: b64('old,whole\n') });
    const before = await listing(ws);

    const content = randomBytes(4 * MAX_FILE_TRANSFER_BYTES);
    await sendPieces(ws, 'data/report.csv', content, randomUUID(), 3);

    // The file is the old one; the listing names only the session's files, and counts the staged bytes.
    expect(await readText(ws, 'data/report.csv')).toBe('old,whole\n');
    const during = await listing(ws);
    expect(during.files.map((f) => f.path)).toEqual(['data/report.csv']);
    expect(during.files[0]!.size).toBe('old,whole\n'.length);
    expect(during.used_bytes).toBeGreaterThanOrEqual(before.used_bytes + 3 * MAX_FILE_TRANSFER_BYTES);
    // A run sees neither the partial data under the file's name nor what is staged.
    const peek = await a.run({ ...ws, runtime: 'bash', code: 'cat data/report.csv; ls .drael-uploads 2>&1 | head -1' });
    expect(peek.stdout).toContain('old,whole');
    expect(peek.stdout).toContain('Permission denied');
    // No file call reaches the staging directory by path.
    expect((await a.errorOf(sandboxCatalog.filesRead, { ...ws, path: '.drael-uploads' })).code).toBe('invalid_path');

    // The next change saves the session; the holder dies; the replica taking over restores the old file.
    await a.call(sandboxCatalog.filesWrite, { ...ws, path: 'other.txt', content_base64: b64('saved\n') });
    const { kv, nc } = await placementKv(a.prefix);
    const holderId = (JSON.parse((await kv.get(placementKeyOf(ws.tenant, ws.session)))!.string()) as { holder: string }).holder;
    await nc.close();
    const holder = new RegExp(`^${b.instance}-[0-9a-f]{8}$`).test(holderId) ? b : a;
    // The test's client is NATS's, not the process's: it reaches whichever replica serves next.
    await holder.proc.stop('SIGKILL');
    let text: string | undefined;
    for (let i = 0; i < 120 && text === undefined; i++) {
      text = await readText(ws, 'data/report.csv').catch(async () => {
        await new Promise((r) => setTimeout(r, 250));
        return undefined;
      });
    }
    expect(text).toBe('old,whole\n');
    expect((await listing(ws)).files.map((f) => f.path).sort()).toEqual(['data/report.csv', 'other.txt']);
    await holder.restart();
  }, 240_000);

  it('gives its room back at once when the sender drops it, and after SANDBOX_UPLOAD_ABANDONED_S when nobody does', async () => {
    const ws = { tenant: 'atomic', session: `room${Date.now()}` };
    await a.call(sandboxCatalog.filesWrite, { ...ws, path: 'seed.txt', content_base64: b64('x') });
    const base = (await listing(ws)).used_bytes;

    // The gateway's own failure path: filesDelete with the upload drops the staged pieces, not the file.
    const dropped = randomUUID();
    await sendPieces(ws, 'seed.txt', randomBytes(4 * MAX_FILE_TRANSFER_BYTES), dropped, 2);
    expect((await listing(ws)).used_bytes).toBeGreaterThanOrEqual(base + 2 * MAX_FILE_TRANSFER_BYTES);
    expect(await a.call(sandboxCatalog.filesDelete, { ...ws, path: 'seed.txt', upload: dropped })).toEqual({ path: 'seed.txt', deleted: true });
    expect((await listing(ws)).used_bytes).toBeLessThan(base + MAX_FILE_TRANSFER_BYTES);
    expect(await readText(ws, 'seed.txt')).toBe('x');
    // A piece after its upload's staged data is gone fails, typed; it never starts a file of its own.
    const late = await a.errorOf(sandboxCatalog.filesWrite, { ...ws, path: 'seed.txt', upload: dropped, append: true, content_base64: b64('tail') });
    expect(late.code).toBe('unavailable');
    expect(await readText(ws, 'seed.txt')).toBe('x');

    // A sender that died: its staged pieces go once no piece came for the abandon time.
    await sendPieces(ws, 'seed.txt', randomBytes(4 * MAX_FILE_TRANSFER_BYTES), randomUUID(), 2);
    expect((await listing(ws)).used_bytes).toBeGreaterThanOrEqual(base + 2 * MAX_FILE_TRANSFER_BYTES);
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await listing(ws)).used_bytes).toBeLessThan(base + MAX_FILE_TRANSFER_BYTES);
    expect(await readText(ws, 'seed.txt')).toBe('x');
  }, 120_000);

  it('lands whole with its last piece, keeping the mode of the file it replaces', async () => {
    const ws = { tenant: 'atomic', session: `whole${Date.now()}` };
    await a.run({ ...ws, runtime: 'bash', code: 'printf "#!/bin/sh\\necho old\\n" > tool.sh; chmod 755 tool.sh' });
    const content = Buffer.concat([Buffer.from('#!/bin/sh\necho new\n'), Buffer.alloc(2 * MAX_FILE_TRANSFER_BYTES, 0x23)]);
    const upload = randomUUID();
    await sendPieces(ws, 'tool.sh', content, upload, 2);
    const last = await a.call(sandboxCatalog.filesWrite, {
      ...ws,
      path: 'tool.sh',
      upload,
      append: true,
      content_base64: content.subarray(2 * MAX_FILE_TRANSFER_BYTES).toString('base64'),
    });
    expect(last).toEqual({ path: 'tool.sh', size: content.length });
    // Between uploads the staging directory is gone: a run listing or archiving the workspace never meets it.
    const ran = await a.run({ ...ws, runtime: 'bash', code: './tool.sh; stat -c %a tool.sh; ls -A' });
    expect(ran.stdout.split('\n').slice(0, 3)).toEqual(['new', '755', 'tool.sh']);
    expect((await listing(ws)).files.map((f) => f.path)).toEqual(['tool.sh']);
  }, 120_000);
});

describe('the staging directory under attack from run code', () => {
  it('a symlink planted at the staging name is never followed: the upload is refused, typed, and nothing is written through it', async () => {
    const ws = { tenant: 'atomic', session: `attack${Date.now()}` };
    await a.call(sandboxCatalog.filesWrite, { ...ws, path: 'victim.txt', content_base64: b64('victim\n') });
    // Inside the sandbox's own staging directory (there while an upload is staged) a run can plant nothing.
    const inFlight = randomUUID();
    await a.call(sandboxCatalog.filesWrite, { ...ws, path: 'victim.txt', upload: inFlight, content_base64: b64('staged'), more: true });
    const inside = await a.run({ ...ws, runtime: 'bash', code: 'ln -s /work/victim.txt .drael-uploads/x 2>&1; echo rc=$?' });
    expect(inside.stdout).toContain('Permission denied');

    // It moves the directory away and plants, at the staging name of the upload about to come, a
    // link to a file of the session; then a link in place of the directory itself.
    const upload = randomUUID();
    const planted = await a.run({
      ...ws,
      runtime: 'bash',
      code: `mv .drael-uploads gone && mkdir .drael-uploads && ln -s /work/victim.txt .drael-uploads/${upload} && echo planted`,
    });
    expect(planted.stdout).toBe('planted\n');
    const refused = await a.errorOf(sandboxCatalog.filesWrite, { ...ws, path: 'new.txt', upload, content_base64: b64('through the link'), more: true });
    expect(refused.code).toBe('invalid_path');
    // The upload in flight meets the run's directory too: refused, nothing written through it.
    const late = await a.errorOf(sandboxCatalog.filesWrite, { ...ws, path: 'victim.txt', upload: inFlight, append: true, content_base64: b64('more') });
    expect(late.code).toBe('invalid_path');
    expect(await readText(ws, 'victim.txt')).toBe('victim\n');

    const linked = await a.run({ ...ws, runtime: 'bash', code: 'rm -r .drael-uploads && ln -s /etc .drael-uploads && echo linked' });
    expect(linked.stdout).toBe('linked\n');
    for (const req of [
      { ...ws, path: 'new.txt', upload, content_base64: b64('through the link'), more: true },
      { ...ws, path: 'new.txt', content_base64: b64('whole write') },
      { ...ws, path: 'new.txt', upload, content_base64: b64('a later piece'), append: true },
    ]) {
      expect((await a.errorOf(sandboxCatalog.filesWrite, req)).code).toBe('invalid_path');
    }
    // What the run moved away is its own business now (gone/ holds the staged piece, the session's own data).
    expect((await listing(ws)).files.map((f) => f.path).sort()).toEqual([`gone/${inFlight}`, 'victim.txt']);
    expect(await readText(ws, 'victim.txt')).toBe('victim\n');

    // Once the run removes what it planted, uploads work again.
    await a.run({ ...ws, runtime: 'bash', code: 'rm .drael-uploads' });
    expect(await a.call(sandboxCatalog.filesWrite, { ...ws, path: 'new.txt', content_base64: b64('fine') })).toEqual({ path: 'new.txt', size: 4 });
  }, 120_000);
});
