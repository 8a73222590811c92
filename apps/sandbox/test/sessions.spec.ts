import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CODE_BYTES, MAX_FILE_TRANSFER_BYTES, sandboxCatalog } from '@drael/contracts';
import { b64, startSandbox, stateSessions, unb64, type Sandbox } from './sandbox-harness.js';

const QUOTA_MB = 16;
let sbx: Sandbox;
beforeAll(async () => {
  sbx = await startSandbox({ SANDBOX_SESSION_QUOTA_MB: String(QUOTA_MB) });
});
afterAll(async () => {
  await sbx?.stop();
});

describe('runs and session files', () => {
  it('python, bash and node each run a real program that reads and writes a session file', async () => {
    const scope = { tenant: 'acme', session: 'chain-1' };
    await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'in/seed.txt', content_base64: b64('3\n') });
    const py = await sbx.run({
      ...scope,
      runtime: 'python',
      code: 'n = int(open("in/seed.txt").read())\nopen("py.txt", "w").write(str(n * 7))\nprint("python wrote", n * 7)',
    });
    expect(py).toMatchObject({ ok: true, exit_code: 0, stdout: 'python wrote 21\n' });
    const sh = await sbx.run({ ...scope, runtime: 'bash', code: 'n=$(cat py.txt); echo $((n + 1)) > bash.txt; echo "bash wrote $((n + 1))"' });
    expect(sh).toMatchObject({ ok: true, stdout: 'bash wrote 22\n' });
    const js = await sbx.run({
      ...scope,
      runtime: 'node',
      code: 'const fs = require("fs"); const n = Number(fs.readFileSync("bash.txt", "utf8")); fs.writeFileSync("out/node.json", JSON.stringify({ n: n * 2 }), { flag: "w" });',
    });
    // out/ does not exist: node fails, and says why.
    expect(js.ok).toBe(false);
    expect(js.stderr).toContain('ENOENT');
    const js2 = await sbx.run({
      ...scope,
      runtime: 'node',
      code: 'const fs = require("fs"); const n = Number(fs.readFileSync("bash.txt", "utf8")); fs.mkdirSync("out"); fs.writeFileSync("out/node.json", JSON.stringify({ n: n * 2 })); console.log("node", n * 2)',
    });
    expect(js2).toMatchObject({ ok: true, stdout: 'node 44\n' });
    const read = await sbx.call(sandboxCatalog.filesRead, { ...scope, path: 'out/node.json' });
    expect(JSON.parse(unb64(read.content_base64))).toEqual({ n: 44 });
    const list = await sbx.call(sandboxCatalog.filesList, scope);
    expect(list.files.map((f) => f.path).sort()).toEqual(['bash.txt', 'in/seed.txt', 'out/node.json', 'py.txt']);
    expect(list.quota_bytes).toBe(QUOTA_MB * 1024 * 1024);
    expect(list.used_bytes).toBeGreaterThan(0);
  });

  it('a run without a session gets a throwaway workspace: nothing it writes is seen by the next run', async () => {
    const first = await sbx.run({ tenant: 'acme', runtime: 'bash', code: 'echo secret > note.txt; ls' });
    expect(first).toMatchObject({ ok: true, stdout: 'note.txt\n' });
    const second = await sbx.run({ tenant: 'acme', runtime: 'bash', code: 'ls -A; cat note.txt' });
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain('No such file');
  });

  it("two tenants using the same session id never see each other's files", async () => {
    await sbx.run({ tenant: 'tenant-a', session: 'shared', runtime: 'bash', code: 'echo a-secret > secret.txt' });
    const b = await sbx.run({ tenant: 'tenant-b', session: 'shared', runtime: 'bash', code: 'ls -A; cat secret.txt; ls -A /work/.. ' });
    expect(b.stdout).not.toContain('secret.txt');
    expect(b.stdout).not.toContain('a-secret');
    expect(b.stderr).toContain('No such file');
    const err = await sbx.errorOf(sandboxCatalog.filesRead, { tenant: 'tenant-b', session: 'shared', path: 'secret.txt' });
    expect(err.code).toBe('file_not_found');
    expect((await sbx.call(sandboxCatalog.filesList, { tenant: 'tenant-b', session: 'shared' })).files).toEqual([]);
    const a = await sbx.call(sandboxCatalog.filesRead, { tenant: 'tenant-a', session: 'shared', path: 'secret.txt' });
    expect(unb64(a.content_base64)).toBe('a-secret\n');
  });

  it('session-id traversal and oversized ids are refused with invalid_session before anything runs', async () => {
    for (const session of ['../../etc', '..', 'a/b', 'x'.repeat(10 * 1024), '', 'sp ace', 'é']) {
      const err = await sbx.errorOf(sandboxCatalog.run, { tenant: 'acme', session, runtime: 'bash', code: 'echo hi' });
      expect(err.code).toBe('invalid_session');
      const ferr = await sbx.errorOf(sandboxCatalog.filesList, { tenant: 'acme', session });
      expect(ferr.code).toBe('invalid_session');
    }
    // A hostile tenant name becomes a hash, never a path.
    await sbx.run({ tenant: '../../../../etc', session: 'x', runtime: 'bash', code: 'echo hi > f' });
    const names = await readdir(stateSessions(sbx.stateDir));
    for (const n of names) expect(n).toMatch(/^[0-9a-f]{40}$/);
  });

  it('file paths that leave the workspace are refused', async () => {
    const scope = { tenant: 'acme', session: 'paths' };
    for (const path of ['../x', '/etc/passwd', 'a/../../b', 'a//b', './../x', 'a/./b']) {
      const err = await sbx.errorOf(sandboxCatalog.filesWrite, { ...scope, path, content_base64: b64('x') });
      expect(err.code, path).toBe('invalid_path');
    }
  });

  it('a symlink to a host file planted in the workspace is never followed by list, read, write or delete', async () => {
    const scope = { tenant: 'acme', session: 'links' };
    const planted = await sbx.run({
      ...scope,
      runtime: 'bash',
      code: 'ln -s /etc/shadow shadow; ln -s / root; mkdir d; ln -s /etc d/etc; ln -s /etc/hostname hn; echo ok > real.txt; ls -A',
    });
    expect(planted.stdout.split('\n')).toEqual(expect.arrayContaining(['shadow', 'root', 'hn', 'real.txt']));
    const list = await sbx.call(sandboxCatalog.filesList, scope);
    expect(list.files.map((f) => f.path)).toEqual(['real.txt']);
    for (const path of ['shadow', 'root/etc/passwd', 'd/etc/passwd', 'hn']) {
      const err = await sbx.errorOf(sandboxCatalog.filesRead, { ...scope, path });
      expect(err.code, path).toBe('invalid_path');
    }
    // Writing through a link must not touch the target: the host's /etc/hostname stays as it is.
    const werr = await sbx.errorOf(sandboxCatalog.filesWrite, { ...scope, path: 'd/etc/hostname', content_base64: b64('pwned') });
    expect(werr.code).toBe('invalid_path');
    const werr2 = await sbx.errorOf(sandboxCatalog.filesWrite, { ...scope, path: 'hn', content_base64: b64('pwned') });
    expect(werr2.code).toBe('invalid_path');
    // Deleting a link removes the link, never its target.
    expect(await sbx.call(sandboxCatalog.filesDelete, { ...scope, path: 'hn' })).toEqual({ path: 'hn', deleted: true });
    const after = await sbx.run({ ...scope, runtime: 'bash', code: 'ls -A; cat /etc/hostname' });
    expect(after.stdout).not.toContain('hn\n');
    expect(after.stdout).toContain('sandbox');
    // Inside the sandbox too, a symlink in the workspace is not followed (the volume is nosymfollow).
    const inside = await sbx.run({ ...scope, runtime: 'bash', code: 'cat shadow' });
    expect(inside.stderr).toMatch(/Too many levels of symbolic links|Permission denied/);
  });

  // retry: one of this test's calls sometimes got no reply within its 30 s while the service kept
  // heartbeating (three CI runs of six, once in eleven local runs of CI's first phase). Found in
  // the thirty-first session: its first call creates a session, whose cap check listed the
  // tenant's keys with the KV library's keys(), which now and then waited for its consumer's 30 s
  // heartbeat (a record written over while it listed; test/placement-listing.spec.ts). The listing
  // no longer depends on it (placement/sandbox-stores.ts, liveKeys). The retry stays until clean
  // CI runs confirm it; a failed attempt prints what the service logged.
  let attempt = 0;
  it('names the workspace cannot carry (not UTF-8, deeper than PATH_MAX) are left out: the session lists, saves and runs on', { retry: 1 }, async () => {
    attempt++;
    // What the service logged during a failed attempt (its slow-call warnings) goes to the test's
    // output: the retry would otherwise leave no trace of the failure.
    const logged = sbx.proc.output().length;
    try {
      const scope = { tenant: 'acme', session: attempt === 1 ? 'odd-names' : `odd-names-${attempt}` };
      await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'keep.txt', content_base64: b64('kept') });
      // What unzip of an old archive makes, and a tree past the kernel's path length.
      const made = await sbx.run({
        ...scope,
        runtime: 'python',
        code: 'import os\nopen(b"bad\\xff\\xfename", "w").write("x")\nos.makedirs("deep", exist_ok=True)\nos.chdir("deep")\nfor _ in range(25):\n    os.mkdir("d" * 200); os.chdir("d" * 200)\nopen("leaf.txt", "w").write("x")\nprint("made")',
      });
      // /work/deep plus 25 levels of 200-character names: past PATH_MAX (4,096 bytes) however the volume is mounted.
      expect(made, made.stderr).toMatchObject({ ok: true, exit_code: 0, stdout: 'made\n' });
      // Listed: what the workspace keeps (the deep tree's first levels, not its leaf); not a 500.
      const listed = await sbx.call(sandboxCatalog.filesList, scope);
      expect(listed.files.map((f) => f.path)).toContain('keep.txt');
      expect(listed.files.some((f) => f.path.endsWith('leaf.txt') || f.path.startsWith('bad'))).toBe(false);
      // Saved: writes and runs go on (the save of the session used to fail, and every write with it).
      await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'after.txt', content_base64: b64('after') });
      expect(await sbx.run({ ...scope, runtime: 'bash', code: 'cat keep.txt after.txt; ls | wc -l' })).toMatchObject({ ok: true, stdout: 'keptafter4\n' });
      await sbx.call(sandboxCatalog.workspaceDelete, scope);
    } catch (err) {
      console.warn(`odd-names attempt ${attempt} failed: ${(err as Error).message}\nthe service logged meanwhile:\n${sbx.proc.output().slice(logged).slice(-20_000)}`);
      throw err;
    }
  });

  it('a hard link across mounts is refused (the workspace is its own filesystem)', async () => {
    const r = await sbx.run({
      tenant: 'acme',
      session: 'hardlinks',
      runtime: 'bash',
      code: 'ln /etc/passwd p1; echo "rc=$?"; echo x > /tmp/t; ln /tmp/t p2; echo "rc=$?"; ln /sandbox/main.sh p3; echo "rc=$?"; ls -A',
    });
    expect(r.stdout).toBe('rc=1\nrc=1\nrc=1\n');
    expect(r.stderr.match(/Invalid cross-device link/g)?.length).toBe(3);
  });

  it('the per-session quota: one huge file and a file flood stop at the quota, then runs and writes are refused until files are deleted', async () => {
    const scope = { tenant: 'acme', session: 'quota' };
    const big = await sbx.run({ ...scope, runtime: 'bash', code: 'dd if=/dev/zero of=big bs=1M count=300 2>&1; stat -c %s big' });
    const size = Number(big.stdout.trim().split('\n').pop());
    expect(size).toBeLessThanOrEqual(QUOTA_MB * 1024 * 1024);
    expect(big.stdout).toMatch(/No space left on device|File too large/);
    const refused = await sbx.errorOf(sandboxCatalog.run, { ...scope, runtime: 'bash', code: 'echo hi' });
    expect(refused.code).toBe('quota_exceeded');
    const wrefused = await sbx.errorOf(sandboxCatalog.filesWrite, { ...scope, path: 'more.txt', content_base64: b64('x'.repeat(100_000)) });
    expect(wrefused.code).toBe('quota_exceeded');
    expect(await sbx.call(sandboxCatalog.filesDelete, { ...scope, path: 'big' })).toEqual({ path: 'big', deleted: true });

    const flood = await sbx.run({
      ...scope,
      runtime: 'python',
      code: [
        'import errno, os',
        'n = 0',
        'try:',
        '    while n < 200000:',
        '        open(f"f{n}", "w").close(); n += 1',
        'except OSError as e:',
        '    print(n, errno.errorcode[e.errno])',
      ].join('\n'),
    });
    const [count, code] = flood.stdout.trim().split(' ');
    expect(code).toBe('ENOSPC');
    expect(Number(count)).toBeLessThan(200000);
    // The listing stays bounded however many files exist.
    const list = await sbx.call(sandboxCatalog.filesList, scope);
    expect(list.files.length).toBeLessThanOrEqual(2000);
    const cleaned = await sbx.run({ ...scope, runtime: 'bash', code: 'find . -name "f*" -delete; ls -A | wc -l' });
    expect(cleaned).toMatchObject({ ok: true, stdout: '0\n' });
  });

  it('session files: read is bounded, write and delete round-trip, missing files are typed', async () => {
    const scope = { tenant: 'acme', session: 'rw' };
    await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'notes/a.txt', content_base64: b64('hello world') });
    const part = await sbx.call(sandboxCatalog.filesRead, { ...scope, path: 'notes/a.txt', max_bytes: 5 });
    expect(part).toEqual({ path: 'notes/a.txt', content_base64: b64('hello'), size: 11, truncated: true });
    const r = await sbx.run({ ...scope, runtime: 'bash', code: 'cat notes/a.txt; echo " again" >> notes/a.txt' });
    expect(r.stdout).toBe('hello world');
    expect(unb64((await sbx.call(sandboxCatalog.filesRead, { ...scope, path: 'notes/a.txt' })).content_base64)).toBe('hello world again\n');
    expect((await sbx.errorOf(sandboxCatalog.filesRead, { ...scope, path: 'nope.txt' })).code).toBe('file_not_found');
    expect((await sbx.errorOf(sandboxCatalog.filesRead, { ...scope, path: 'notes' })).code).toBe('invalid_path');
    expect(await sbx.call(sandboxCatalog.filesDelete, { ...scope, path: 'notes/a.txt' })).toEqual({ path: 'notes/a.txt', deleted: true });
    expect(await sbx.call(sandboxCatalog.filesDelete, { ...scope, path: 'notes/a.txt' })).toEqual({ path: 'notes/a.txt', deleted: false });
    // A FIFO planted by a program does not block a read.
    await sbx.run({ ...scope, runtime: 'bash', code: 'mkfifo pipe' });
    expect((await sbx.errorOf(sandboxCatalog.filesRead, { ...scope, path: 'pipe' })).code).toBe('invalid_path');
  });

  it('a file larger than one message is written in pieces with append and read in pieces from an offset', async () => {
    const scope = { tenant: 'acme', session: 'pieces' };
    const piece = (c: string) => Buffer.alloc(MAX_FILE_TRANSFER_BYTES, c).toString('base64');
    expect(await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'big.bin', content_base64: piece('a') })).toEqual({ path: 'big.bin', size: MAX_FILE_TRANSFER_BYTES });
    expect(await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'big.bin', content_base64: piece('b'), append: true })).toEqual({
      path: 'big.bin',
      size: 2 * MAX_FILE_TRANSFER_BYTES,
    });
    const r = await sbx.run({ ...scope, runtime: 'bash', code: 'wc -c < big.bin; head -c 1 big.bin; tail -c 1 big.bin' });
    expect(r.stdout).toBe(`${2 * MAX_FILE_TRANSFER_BYTES}\nab`);
    // Read back in pieces from an offset.
    const tail = await sbx.call(sandboxCatalog.filesRead, { ...scope, path: 'big.bin', offset: 2 * MAX_FILE_TRANSFER_BYTES - 3 });
    expect(tail).toEqual({ path: 'big.bin', content_base64: b64('bbb'), size: 2 * MAX_FILE_TRANSFER_BYTES, truncated: false });
    const first = await sbx.call(sandboxCatalog.filesRead, { ...scope, path: 'big.bin', offset: MAX_FILE_TRANSFER_BYTES - 1, max_bytes: 2 });
    expect(first).toMatchObject({ content_base64: b64('ab'), truncated: true });
    expect(await sbx.call(sandboxCatalog.filesRead, { ...scope, path: 'big.bin', offset: 5 * MAX_FILE_TRANSFER_BYTES })).toMatchObject({ content_base64: '', truncated: false });
    // Without append a write replaces the file.
    expect(await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'big.bin', content_base64: b64('x') })).toEqual({ path: 'big.bin', size: 1 });
  });

  it('input limits are typed errors before any container starts', async () => {
    const exact = `#${'x'.repeat(MAX_CODE_BYTES - 10)}\nprint(1)`;
    expect(Buffer.byteLength(exact)).toBe(MAX_CODE_BYTES);
    expect(await sbx.run({ tenant: 'acme', runtime: 'python', code: exact })).toMatchObject({ ok: true, stdout: '1\n' });
    const tooBig = await sbx.errorOf(sandboxCatalog.run, { tenant: 'acme', runtime: 'python', code: `${exact}#` });
    expect(tooBig).toMatchObject({ code: 'code_too_large', retryable: false });
    for (const timeout_s of [0, -1, 300.5, 301, 1e9]) {
      expect((await sbx.errorOf(sandboxCatalog.run, { tenant: 'acme', runtime: 'bash', code: 'true', timeout_s })).code).toBe('invalid_timeout');
    }
    // NaN cannot travel as JSON (it becomes null), and null is not a number: still refused.
    expect((await sbx.errorOf(sandboxCatalog.run, { tenant: 'acme', runtime: 'bash', code: 'true', timeout_s: Number.NaN })).code).toMatch(/invalid_timeout|bad_request/);
    expect((await sbx.errorOf(sandboxCatalog.run, { tenant: 'acme', runtime: 'ruby' as 'bash', code: 'true' })).code).toBe('bad_request');
  });

  it('output that is not valid UTF-8 still yields valid JSON', async () => {
    const r = await sbx.run({ tenant: 'acme', runtime: 'bash', code: "printf 'a\\xff\\xfeb\\x00c'; printf '\\xc3' >&2" });
    expect(r.stdout).toBe('a\uFFFD\uFFFDb\u0000c');
    expect(r.stderr).toBe('\uFFFD');
    expect(() => JSON.parse(JSON.stringify(r)) as unknown).not.toThrow();
  });
});

describe("a request's workspace (scope: request)", () => {
  const volumes = async (): Promise<string[]> => {
    const root = join(sbx.stateDir, 'requests');
    const out: string[] = [];
    for (const tenantDir of await readdir(root).catch(() => [] as string[])) {
      for (const f of await readdir(join(root, tenantDir))) if (f.endsWith('.img')) out.push(f);
    }
    return out;
  };

  it('is shared by the runs that name it, apart from the session of the same id, and deleted with its files', async () => {
    const ws = { tenant: 'acme', session: 'req_abc', scope: 'request' as const };
    expect(await sbx.run({ ...ws, runtime: 'bash', code: 'echo from-call-1 > shared.txt' })).toMatchObject({ ok: true });
    expect(await sbx.run({ ...ws, runtime: 'bash', code: 'cat shared.txt' })).toMatchObject({ ok: true, stdout: 'from-call-1\n' });
    // The same id as a client session (header or /v1/sessions) names another workspace.
    const asSession = await sbx.run({ tenant: 'acme', session: 'req_abc', runtime: 'bash', code: 'cat shared.txt' });
    expect(asSession.ok).toBe(false);
    expect((await sbx.call(sandboxCatalog.filesList, { tenant: 'acme', session: 'req_abc' })).files).toEqual([]);
    // Another tenant naming it gets a workspace of its own.
    expect((await sbx.run({ ...ws, tenant: 'other', runtime: 'bash', code: 'cat shared.txt' })).ok).toBe(false);
    expect((await sbx.call(sandboxCatalog.filesList, ws)).files.map((f) => f.path)).toEqual(['shared.txt']);

    expect(await volumes()).toHaveLength(2);
    expect(await sbx.call(sandboxCatalog.workspaceDelete, ws)).toEqual({ deleted: true });
    expect(await sbx.call(sandboxCatalog.workspaceDelete, { ...ws, tenant: 'other' })).toEqual({ deleted: true });
    expect(await volumes()).toEqual([]);
    expect((await sbx.call(sandboxCatalog.filesList, ws)).files).toEqual([]);
    // The client session of the same id is untouched.
    expect((await sbx.call(sandboxCatalog.filesList, { tenant: 'acme', session: 'req_abc' })).quota_bytes).toBe(QUOTA_MB * 1024 * 1024);
    expect(await sbx.call(sandboxCatalog.workspaceDelete, ws)).toEqual({ deleted: false });
  });

  it('deleted while a run uses it: the run finishes, then the volume is gone', async () => {
    const ws = { tenant: 'acme', session: 'req_busy', scope: 'request' as const };
    const run = sbx.run({ ...ws, runtime: 'bash', code: 'sleep 2; echo done > f.txt; cat f.txt' });
    for (let i = 0; i < 100 && (await volumes()).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await volumes()).toHaveLength(1);
    expect(await sbx.call(sandboxCatalog.workspaceDelete, ws)).toEqual({ deleted: true });
    expect(await run).toMatchObject({ ok: true, stdout: 'done\n' });
    await expect.poll(volumes, { timeout: 10_000 }).toEqual([]);
  });

  it('one left behind (its gateway never deleted it) is removed once unused and older than the maximum age; sessions stay', { timeout: 120_000 }, async () => {
    const short = await startSandbox({ SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S: '2' });
    try {
      const images = async (kind: 'requests' | 'sessions') => {
        const root = join(short.stateDir, kind);
        const out: string[] = [];
        for (const d of await readdir(root).catch(() => [] as string[])) for (const f of await readdir(join(root, d))) if (f.endsWith('.img')) out.push(f);
        return out;
      };
      expect(await short.run({ tenant: 'acme', session: 'kept', runtime: 'bash', code: 'echo x > f.txt' })).toMatchObject({ ok: true });
      // The request workspace last, and looked at as soon as its run answers: a slow run before
      // the look (a loaded machine) could otherwise outlast its 2 s maximum age.
      expect(await short.run({ tenant: 'acme', session: 'req_orphan', scope: 'request', runtime: 'bash', code: 'echo x > f.txt' })).toMatchObject({ ok: true });
      expect(await images('requests')).toHaveLength(1);
      await expect.poll(() => images('requests'), { timeout: 30_000, interval: 500 }).toEqual([]);
      expect(await images('sessions')).toHaveLength(1);
      expect(await short.run({ tenant: 'acme', session: 'kept', runtime: 'bash', code: 'cat f.txt' })).toMatchObject({ ok: true, stdout: 'x\n' });
    } finally {
      await short.stop();
    }
  });
});
