import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_STREAM_BYTES, sandboxCatalog } from '@drael/contracts';
import { busySandboxContainers } from '@drael/test-support';
import { b64, hostProcessesWith, rssKiB, startSandbox, type Sandbox } from './sandbox-harness.js';

// The attack suite: each program is what an attacker would run; each test asserts the outcome.
const PIDS = 128;
const MEMORY_MB = 256;
const SECRET = `drael-secret-${Math.random().toString(36).slice(2)}`;
let sbx: Sandbox;

beforeAll(async () => {
  sbx = await startSandbox({ SANDBOX_PIDS: String(PIDS), SANDBOX_MEMORY_MB: String(MEMORY_MB), DRAEL_TEST_SECRET: SECRET });
});
afterAll(async () => {
  await sbx?.stop();
});

const py = (code: string, extra: { timeout_s?: number; session?: string } = {}) => sbx.run({ tenant: 'attacker', runtime: 'python', code, ...extra });
const sh = (code: string, extra: { timeout_s?: number; session?: string } = {}) => sbx.run({ tenant: 'attacker', runtime: 'bash', code, ...extra });

/** After each attack the service still runs a plain program: the host and the service are unaffected. */
async function expectHealthy(): Promise<void> {
  expect(await py('print(6 * 7)')).toMatchObject({ ok: true, stdout: '42\n' });
  // Containers prepared ahead wait idle; none still runs a program.
  expect(await busySandboxContainers(sbx.instance)).toEqual([]);
}

describe('attack suite', () => {
  it('a python fork bomb is bounded by the pids limit', async () => {
    const r = await py(
      [
        'import os, time',
        'n = 0',
        'try:',
        '    while n < 100000:',
        '        if os.fork() == 0:',
        '            time.sleep(30); os._exit(0)',
        '        n += 1',
        'except OSError as e:',
        '    print(n, e.strerror)',
      ].join('\n'),
      { timeout_s: 20 },
    );
    const [count] = r.stdout.split(' ');
    expect(Number(count)).toBeGreaterThan(10);
    expect(Number(count)).toBeLessThan(PIDS);
    expect(r.stdout).toContain('Resource temporarily unavailable');
    await expectHealthy();
  });

  it('a bash fork bomb is held by the pids cgroup (read from the host while it runs) and ends with its run', async () => {
    const run = sh('bomb() { bomb | bomb & }; bomb; sleep 100; echo after', { timeout_s: 6 });
    let done = false;
    void run.finally(() => (done = true));
    const samples: number[] = [];
    let max = '';
    while (!done) {
      const [id] = await busySandboxContainers(sbx.instance);
      if (id) {
        const dir = `/sys/fs/cgroup/pids/docker/${id}`;
        max = (await readFile(`${dir}/pids.max`, 'utf8').catch(() => max)).trim();
        const current = Number((await readFile(`${dir}/pids.current`, 'utf8').catch(() => '0')).trim());
        if (current > 0) samples.push(current);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const r = await run;
    expect(max).toBe(String(PIDS));
    expect(samples.length).toBeGreaterThan(0);
    expect(Math.max(...samples)).toBeLessThanOrEqual(PIDS);
    // However far it got on a loaded machine, the timer ended it.
    expect(r).toMatchObject({ ok: false, timed_out: true, exit_code: 137, oom_killed: false, stdout: '' });
    await expectHealthy();
  });

  it('a thread bomb is bounded by the same limit', async () => {
    const r = await py(
      [
        'import threading, time',
        'n = 0',
        'try:',
        '    while n < 100000:',
        '        threading.Thread(target=time.sleep, args=(30,), daemon=True).start(); n += 1',
        'except RuntimeError as e:',
        '    print(n, e)',
        'import os; os._exit(0)',
      ].join('\n'),
      { timeout_s: 20 },
    );
    const count = Number(r.stdout.split(' ')[0]);
    expect(count).toBeGreaterThan(10);
    expect(count).toBeLessThan(PIDS);
    expect(r.stdout).toContain("can't start new thread");
    await expectHealthy();
  });

  it('a 1 GiB memory bomb is OOM-killed: exit 137, oom_killed', async () => {
    const r = await py('b = bytearray(b"\\x01") * (1 << 30)\nprint("allocated", len(b))');
    expect(r).toMatchObject({ ok: false, exit_code: 137, oom_killed: true, timed_out: false });
    expect(r.stdout).not.toContain('allocated');
    await expectHealthy();
  });

  it('/tmp is a bounded tmpfs: filling it and flooding it with inodes both stop', async () => {
    const fill = await sh('dd if=/dev/zero of=/tmp/big bs=1M count=1000 2>&1; stat -c %s /tmp/big');
    expect(fill.stdout).toContain('No space left on device');
    expect(Number(fill.stdout.trim().split('\n').pop())).toBeLessThanOrEqual(64 * 1024 * 1024);
    const flood = await py(
      [
        'import errno',
        'n = 0',
        'try:',
        '    while n < 1000000:',
        '        open(f"/tmp/f{n}", "w").close(); n += 1',
        'except OSError as e:',
        '    print(n, errno.errorcode[e.errno])',
      ].join('\n'),
    );
    const [count, code] = flood.stdout.trim().split(' ');
    expect(code).toBe('ENOSPC');
    expect(Number(count)).toBeLessThanOrEqual(4096);
    const shm = await sh('dd if=/dev/zero of=/dev/shm/big bs=1M count=1000 2>&1; stat -c %s /dev/shm/big');
    expect(Number(shm.stdout.trim().split('\n').pop())).toBeLessThanOrEqual(16 * 1024 * 1024);
  });

  it('a file flood in a session: a listing names at most 2,000 files and says when the session holds more', async () => {
    // The default quota (256 MB) has the inodes for it; the bound keeps one listing's reply small.
    const scope = { tenant: 'attacker', session: 'many-files' };
    // 2,000 files in two directories: all named, nothing left out.
    const made = await sbx.run({ ...scope, runtime: 'bash', code: 'mkdir a b; for i in $(seq 1000); do : > a/$i; : > b/$i; done; find . -type f | wc -l' });
    expect(made).toMatchObject({ ok: true, stdout: '2000\n' });
    const whole = await sbx.call(sandboxCatalog.filesList, scope);
    expect([whole.files.length, whole.truncated]).toEqual([2000, false]);
    // One more: still 2,000 named, and the listing says it is not all.
    await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'one-more.txt', content_base64: b64('x') });
    const cut = await sbx.call(sandboxCatalog.filesList, scope);
    expect([cut.files.length, cut.truncated]).toEqual([2000, true]);
  });

  it('the root filesystem is read-only', async () => {
    const r = await sh(
      'for f in /etc/x /usr/bin/x /x /var/x /sandbox/x /root/x; do touch "$f" 2>&1; done; (echo pwned >> /etc/passwd) 2>&1; ls /etc/x /usr/bin/x /x /var/x /sandbox/x 2>&1 | grep -vc "No such"; grep -c pwned /etc/passwd',
    );
    // /root and /etc/passwd are refused for permissions before the read-only check is reached.
    expect(r.stdout.match(/Read-only file system/g)?.length).toBe(5);
    expect(r.stdout.match(/Permission denied/g)?.length).toBe(2);
    expect(r.stdout.trim().split('\n').slice(-2)).toEqual(['0', '0']);
  });

  it('/proc and /sys pokes fail', async () => {
    const r = await py(
      [
        'import json',
        'out = {}',
        'for path, data in [("/proc/sysrq-trigger", "c"), ("/proc/sys/kernel/panic", "1"), ("/proc/sys/vm/drop_caches", "3"),',
        '                   ("/sys/kernel/mm/transparent_hugepage/enabled", "never"), ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "-1"),',
        '                   ("/proc/self/oom_score_adj", "-1000"), ("/proc/1/mem", "x")]:',
        '    try:',
        '        with open(path, "w") as f: f.write(data)',
        '        out[path] = "WRITTEN"',
        '    except OSError as e:',
        '        out[path] = e.strerror',
        'for path in ["/proc/kcore", "/proc/kmsg", "/proc/1/mem", "/sys/kernel/security"]:',
        '    try:',
        '        open(path, "rb").read(16); out[path] = "READ"',
        '    except OSError as e:',
        '        out[path] = e.strerror',
        'print(json.dumps(out))',
      ].join('\n'),
    );
    const out = JSON.parse(r.stdout) as Record<string, string>;
    for (const [path, result] of Object.entries(out)) expect(result, path).not.toMatch(/WRITTEN|READ/);
  });

  it('setuid and capability use fails: chown, mknod, raw sockets, no setuid binaries, no capabilities', async () => {
    const r = await sh(
      [
        'echo x > /tmp/f; chown 0:0 /tmp/f 2>&1 || echo chown-refused',
        'mknod /tmp/null c 1 3 2>&1 || echo mknod-refused',
        'find / -xdev \\( -perm -4000 -o -perm -2000 \\) -type f 2>/dev/null | wc -l',
        'grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs)" /proc/self/status',
        'python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)" 2>&1 | tail -1',
        'python3 -c "import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)" 2>&1 | tail -1',
        'id -u',
      ].join('\n'),
    );
    expect(r.stdout).toContain('chown-refused');
    expect(r.stdout).toContain('mknod-refused');
    expect(r.stdout).toMatch(/^0$/m);
    expect(r.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(r.stdout).toMatch(/CapPrm:\s+0000000000000000/);
    expect(r.stdout).toMatch(/CapBnd:\s+0000000000000000/);
    expect(r.stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(r.stdout.match(/PermissionError: \[Errno 1\] Operation not permitted/g)?.length).toBe(2);
    expect(r.stdout.trim().split('\n').pop()).toBe('65534');
  });

  it('unshare and mount fail', async () => {
    const r = await sh(
      [
        'unshare -Ur id 2>&1; echo "unshare-rc=$?"',
        'unshare -m true 2>&1; echo "unshare-m-rc=$?"',
        'mount -t tmpfs none /tmp 2>&1; echo "mount-rc=$?"',
        'mount --bind / /work 2>&1; echo "bind-rc=$?"',
      ].join('\n'),
    );
    for (const key of ['unshare-rc', 'unshare-m-rc', 'mount-rc', 'bind-rc']) expect(r.stdout).toMatch(new RegExp(`${key}=[1-9]`));
    expect(r.stdout).not.toContain('uid=0(root)');
  });

  it('there is no Docker or containerd socket to be found', async () => {
    const r = await sh(
      'find / -path /proc -prune -o \\( -type s -o -name "*.sock" -o -name "containerd*" \\) -print 2>/dev/null; ls -la /var/run/docker.sock /run/docker.sock /run/containerd 2>&1 | grep -v "No such"; true',
    );
    expect(r.stdout.trim()).toBe('');
  });

  it('fd exhaustion stops at the nofile limit', async () => {
    const r = await py(
      [
        'import errno',
        'fs = []',
        'try:',
        '    while len(fs) < 1000000:',
        '        fs.append(open("/dev/null"))',
        'except OSError as e:',
        '    print(len(fs), errno.errorcode[e.errno])',
      ].join('\n'),
    );
    const [count, code] = r.stdout.trim().split(' ');
    expect(code).toBe('EMFILE');
    expect(Number(count)).toBeLessThan(1024);
    await expectHealthy();
  });

  it('CPU hogs are bounded to the configured CPU share and killed at the timeout', async () => {
    const r = await sh('cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us; for i in 1 2 3 4; do (while :; do :; done) & done; wait', {
      timeout_s: 3,
    });
    const [quota, period] = r.stdout.trim().split('\n').map(Number);
    expect(quota! / period!).toBe(1);
    expect(r).toMatchObject({ ok: false, timed_out: true, exit_code: 137 });
    await expectHealthy();
  });

  it('a time bomb is killed at the timeout: timed_out, duration about the timeout', async () => {
    const r = await py('import time\nprint("start", flush=True)\ntime.sleep(1000)', { timeout_s: 3 });
    expect(r).toMatchObject({ ok: false, timed_out: true, exit_code: 137, oom_killed: false, stdout: 'start\n' });
    expect(r.duration_s).toBeGreaterThanOrEqual(3);
    expect(r.duration_s).toBeLessThan(3 + 10);
  });

  it('an orphaned daemon does not outlive its run', async () => {
    const marker = String(400000 + Math.floor(Math.random() * 90000));
    const session = `orphans-${marker}`;
    // Daemons detached every way a program can, two of them set to write into the session's
    // workspace once the run has answered, as a daemon that outlived it would.
    const code = [
      `(setsid sleep ${marker} </dev/null >/dev/null 2>&1 &)`,
      `nohup sleep ${marker} >/dev/null 2>&1 & disown`,
      `(setsid sh -c 'sleep 3; echo late > late-setsid.txt' </dev/null >/dev/null 2>&1 &)`,
      `nohup sh -c 'sleep 3; echo late > late-nohup.txt' >/dev/null 2>&1 & disown`,
      'echo started',
    ].join('; ');
    const r = await sh(code, { session, timeout_s: 60 });
    expect(r).toMatchObject({ ok: true, timed_out: false, stdout: 'started\n' });
    // Killed before the answer (the launcher's kill -9 -1), their container removed right after it
    // (issue 20): a moment later none is on the host and no container of the run is left.
    await expect.poll(() => hostProcessesWith(`sleep ${marker}`), { timeout: 10_000, interval: 200 }).toEqual([]);
    await expect.poll(() => busySandboxContainers(sbx.instance), { timeout: 10_000, interval: 200 }).toEqual([]);
    // And none ever ran again: past their 3 s, the session holds only what the run itself wrote (nothing).
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(await sh('ls -A', { session })).toMatchObject({ ok: true, stdout: '' });
  });

  it('zombies are reaped by the init process', async () => {
    const r = await py(
      [
        'import os, time',
        'for _ in range(20):',
        '    if os.fork() == 0:',
        '        if os.fork() == 0:',
        '            time.sleep(0.2); os._exit(0)', // grandchild: orphaned, reparented to PID 1
        '        os._exit(0)',
        'for _ in range(20): os.wait()',
        'time.sleep(1.5)',
        'zombies = 0',
        'for pid in os.listdir("/proc"):',
        '    if pid.isdigit():',
        '        try:',
        '            if open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z": zombies += 1',
        '        except OSError: pass',
        'print("zombies", zombies, "pid1", open("/proc/1/comm").read().strip())',
      ].join('\n'),
    );
    // The init is the run's launcher (sh, issue 20), which reaps while it waits for the program.
    expect(r.stdout).toMatch(/^zombies 0 pid1 (docker-init|tini|sh)$/m);
  });

  it('an output flood keeps 64 KiB, runs to its timeout, and leaves the service memory flat', async () => {
    const pid = sbx.proc.child.pid!;
    // The first flood grows V8's young generation to its working size (Node 24 sizes it up to
    // ~100 MB under this churn of socket buffers: transient, freed by the next scavenge); what must
    // stay flat is the service's memory from one flood to the next, or every flood would leak.
    await sh('yes', { timeout_s: 4 });
    const before = await rssKiB(pid);
    const r = await sh('yes', { timeout_s: 4 });
    const after = await rssKiB(pid);
    expect(Buffer.byteLength(r.stdout)).toBe(MAX_STREAM_BYTES);
    expect(r.stdout.startsWith('y\ny\n')).toBe(true);
    expect(r).toMatchObject({ timed_out: true, truncated: { stdout: true, stderr: false } });
    // Never killed for printing: it ran until the timer.
    expect(r.duration_s).toBeGreaterThanOrEqual(4);
    expect(after - before).toBeLessThan(64 * 1024);
    const err = await sh('head -c 200000 /dev/zero | tr "\\0" e >&2; echo done');
    expect(err).toMatchObject({ ok: true, stdout: 'done\n', truncated: { stdout: false, stderr: true } });
    expect(err.stderr.length).toBe(MAX_STREAM_BYTES);
  });

  it('kill -9 -1 inside the sandbox kills only that run, not a host process of the same uid', async () => {
    const victim: ChildProcess = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'sleep', '120'], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 300));
      // kill(-1) reaches every process of the run except the caller and its init; `wait` sees the sleep die.
      const r = await sh('sleep 30 & kill -9 -1; wait; echo survived', { timeout_s: 20 });
      expect(r).toMatchObject({ ok: true, timed_out: false, stdout: 'survived\n' });
      expect(r.stderr).toMatch(/Killed\s+sleep 30/);
      expect(victim.exitCode).toBeNull();
      expect(victim.signalCode).toBeNull();
      await expectHealthy();
    } finally {
      victim.kill('SIGKILL');
    }
  });

  it('no secret of the service reaches the environment of a run', async () => {
    const r = await sh('env; cat /proc/1/environ | tr "\\0" "\\n"; cat /proc/self/environ | tr "\\0" "\\n"');
    expect(r.stdout).not.toContain(SECRET);
    expect(r.stdout).not.toMatch(/NATS_URL|DRAEL_|SANDBOX_|DOCKER/);
    const names = new Set(
      r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('=')[0]),
    );
    for (const n of names) expect(['PATH', 'LANG', 'HOME', 'PYTHONDONTWRITEBYTECODE', 'TMPDIR', 'HOSTNAME', 'PWD', 'SHLVL', '_']).toContain(n);
  });

  it('with network off there is only lo: no egress, no DNS, not even the host', async () => {
    const r = await py(
      [
        'import socket',
        'print(sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]))',
        'for host, port in [("1.1.1.1", 53), ("172.17.0.1", 22), ("10.0.0.1", 80), ("169.254.169.254", 80)]:',
        '    s = socket.socket(); s.settimeout(2)',
        '    try:',
        '        s.connect((host, port)); print(host, "CONNECTED")',
        '    except OSError as e:',
        '        print(host, e.strerror or e)',
        'try:',
        '    socket.getaddrinfo("example.com", 80); print("DNS RESOLVED")',
        'except socket.gaierror as e:',
        '    print("dns", e)',
      ].join('\n'),
    );
    expect(r.stdout.split('\n')[0]).toBe("['lo']");
    expect(r.stdout).not.toMatch(/CONNECTED|DNS RESOLVED/);
    expect(r.stdout.match(/Network is unreachable/g)?.length).toBe(4);
  });
});
