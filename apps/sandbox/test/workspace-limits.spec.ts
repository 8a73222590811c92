import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { placementKeyOf, placementKv, startSandbox, type Sandbox } from './sandbox-harness.js';

// What a session's workspace may hold for a save (SANDBOX_WORKSPACE_MAX_ENTRIES,
// SANDBOX_WORKSPACE_MAX_PATH_MB, at their defaults here). The attack: hard links cost no inode and
// a path may be 4 KB, so one run within the volume's 16,384 inodes left a tree whose manifest was
// hundreds of MB (30,000 links at PATH_MAX depth: a 222 MB buffer and 1.3 GB of the sandbox's
// memory for one save; past ~70,000, JSON.stringify threw).
let sbx: Sandbox;
const MAX_PATH_BYTES = 8 * 1024 * 1024;

// 1,900 directories deep (a 3.8 KB path), one file there and `links` more names of it.
const deepLinks = (links: number) => `
import os
for _ in range(1900):
    os.mkdir('a')
    os.chdir('a')
open('f', 'w').write('x')
for i in range(${links}):
    os.link('f', 'l%d' % i)
print('made')
`;

async function savedObjectOf(tenant: string, session: string): Promise<string | undefined> {
  const { kv, nc } = await placementKv(sbx.prefix);
  try {
    return (JSON.parse((await kv.get(placementKeyOf(tenant, session)))!.string()) as { object?: string }).object;
  } finally {
    await nc.close();
  }
}

beforeAll(async () => {
  sbx = await startSandbox({ SANDBOX_WARM_POOL: '0' });
}, 120_000);
afterAll(async () => {
  await sbx?.stop();
});

describe("what a session's workspace may hold for a save", () => {
  it('answers a run that left thousands of hard links at PATH_MAX depth with its output and a typed refusal to save; the service and the session go on', async () => {
    expect(await sbx.run({ tenant: 'tenant-a', session: 'deep', runtime: 'bash', code: 'echo kept > keep.txt; echo ok' })).toMatchObject({ ok: true, stdout: 'ok\n' });
    const before = await savedObjectOf('tenant-a', 'deep');
    expect(before).toBeDefined();

    // The program's own answer reaches the caller; its files are not saved, and the reply says why.
    const attacked = await sbx.run({ tenant: 'tenant-a', session: 'deep', runtime: 'python', code: deepLinks(10_000), timeout_s: 120 });
    expect(attacked).toMatchObject({
      ok: true,
      stdout: 'made\n',
      unsaved: { code: 'quota_exceeded', retryable: false, details: { limit: 'workspace_path_bytes', max: MAX_PATH_BYTES } },
    });
    // The record still names the last saved copy.
    expect(await savedObjectOf('tenant-a', 'deep')).toBe(before);

    // The service still answers: another tenant's session run, a session-less run.
    expect(await sbx.run({ tenant: 'tenant-b', session: 'other', runtime: 'bash', code: 'echo fine > f.txt; cat f.txt' })).toMatchObject({ ok: true, stdout: 'fine\n' });
    expect(await sbx.run({ tenant: 'tenant-b', runtime: 'python', code: 'print(6*7)' })).toMatchObject({ ok: true, stdout: '42\n' });

    // A file call that changes the over-limit workspace fails typed: its change is not saved either.
    const written = await sbx.errorOf(sandboxCatalog.filesWrite, { tenant: 'tenant-a', session: 'deep', path: 'more.txt', content_base64: Buffer.from('more').toString('base64') });
    expect(written).toMatchObject({ code: 'quota_exceeded', retryable: false, details: { limit: 'workspace_path_bytes', max: MAX_PATH_BYTES } });
    expect(written.message).toContain('delete');

    // The session stays usable: a run that deletes the tree is saved again, with what was kept.
    const cleaned = await sbx.run({ tenant: 'tenant-a', session: 'deep', runtime: 'bash', code: 'rm -rf a; cat keep.txt more.txt' });
    expect(cleaned).toMatchObject({ ok: true, stdout: 'kept\nmore' });
    expect(cleaned.unsaved).toBeUndefined();
    const after = await savedObjectOf('tenant-a', 'deep');
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    const listed = await sbx.call(sandboxCatalog.filesList, { tenant: 'tenant-a', session: 'deep' });
    expect(listed.files.map((f) => f.path).sort()).toEqual(['keep.txt', 'more.txt']);
  }, 300_000);

  it('counts each hard link as an entry: a flat directory of 40,000 names of one file is refused on its count', async () => {
    const code = "import os\nopen('f', 'w').write('x')\nfor i in range(40000):\n    os.link('f', 'l%d' % i)\nprint('made')\n";
    const attacked = await sbx.run({ tenant: 'tenant-a', session: 'flat', runtime: 'python', code, timeout_s: 120 });
    expect(attacked).toMatchObject({ ok: true, stdout: 'made\n', unsaved: { code: 'quota_exceeded', details: { limit: 'workspace_entries', max: 32_768 } } });
    // Under the count again (a file and 30,000 links), the next run saves.
    const trimmed = await sbx.run({ tenant: 'tenant-a', session: 'flat', runtime: 'bash', code: 'find . -name "l3????" -delete; ls | wc -l' });
    expect(trimmed).toMatchObject({ ok: true, stdout: '30001\n' });
    expect(trimmed.unsaved).toBeUndefined();
    expect(await savedObjectOf('tenant-a', 'flat')).toBeDefined();
  }, 300_000);
});
