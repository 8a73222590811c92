import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { exec, startSandbox, unb64, type Sandbox } from './sandbox-harness.js';

/*
 * Network on means egress to the outside only. Every target here is on this machine: the host
 * itself, another sandbox, and a network namespace the test creates that stands in for "the
 * outside" (a public-looking TEST-NET-2 address) and for a private network (10.x), both routed
 * from the host through a veth pair. No packet is aimed at any other machine.
 */
const NS = `drael-fw-${process.pid}`;
const VETH_HOST = `dfw${process.pid % 100000}h`;
const VETH_NS = `dfw${process.pid % 100000}n`;
const OUTSIDE_IP = '198.51.100.7';
const PRIVATE_IP = '10.254.77.7';
const HOST_SIDE_IP = '198.51.100.1';
const PORT = 18080;

let sbx: Sandbox;
let hostServer: Server;
const hostAccepted: string[] = [];
let hostPort = 0;

async function ip(...args: string[]) {
  await exec('ip', args);
}

beforeAll(async () => {
  sbx = await startSandbox();
  hostServer = createServer((s: Socket) => {
    hostAccepted.push(String(s.remoteAddress));
    s.end('host\n');
  });
  await new Promise<void>((r) => hostServer.listen(0, '0.0.0.0', r));
  hostPort = (hostServer.address() as { port: number }).port;

  await ip('netns', 'add', NS);
  await ip('link', 'add', VETH_HOST, 'type', 'veth', 'peer', 'name', VETH_NS);
  await ip('link', 'set', VETH_NS, 'netns', NS);
  await ip('addr', 'add', `${HOST_SIDE_IP}/32`, 'dev', VETH_HOST);
  await ip('link', 'set', VETH_HOST, 'up');
  await ip('route', 'add', `${OUTSIDE_IP}/32`, 'dev', VETH_HOST);
  await ip('route', 'add', `${PRIVATE_IP}/32`, 'dev', VETH_HOST);
  await ip('-n', NS, 'addr', 'add', `${OUTSIDE_IP}/32`, 'dev', VETH_NS);
  await ip('-n', NS, 'addr', 'add', `${PRIVATE_IP}/32`, 'dev', VETH_NS);
  await ip('-n', NS, 'link', 'set', VETH_NS, 'up');
  await ip('-n', NS, 'link', 'set', 'lo', 'up');
  await ip('-n', NS, 'route', 'add', `${HOST_SIDE_IP}/32`, 'dev', VETH_NS);
  await ip('-n', NS, 'route', 'add', 'default', 'via', HOST_SIDE_IP, 'dev', VETH_NS, 'onlink');
});

afterAll(async () => {
  hostServer?.close();
  await exec('ip', ['link', 'del', VETH_HOST]).catch(() => undefined);
  await exec('ip', ['netns', 'del', NS]).catch(() => undefined);
  await sbx?.stop();
});

/** A TCP server inside the stand-in namespace for `seconds`, answering "outside" (python3 on the host). */
function serveInNamespace(seconds: number) {
  const script = [
    'import socket, sys, time',
    's = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)',
    `s.bind(("0.0.0.0", ${PORT})); s.listen(16); s.settimeout(0.5)`,
    'print("listening", flush=True)',
    `end = time.time() + ${seconds}`,
    'while time.time() < end:',
    '    try:',
    '        c, a = s.accept(); print("accepted", a[0], c.getsockname()[0], flush=True); c.sendall(b"outside\\n"); c.close()',
    '    except socket.timeout: pass',
  ].join('\n');
  const child = spawn('ip', ['netns', 'exec', NS, 'python3', '-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    ready: async () => {
      for (let i = 0; i < 100 && !out.includes('listening'); i++) await new Promise((r) => setTimeout(r, 50));
    },
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
      return out;
    },
  };
}

// Connects to every target at once (a dropped SYN costs the whole timeout), one line per target.
const probe = (targets: Array<[string, number]>) =>
  [
    'import socket, sys, threading',
    'lock = threading.Lock()',
    'def say(line):',
    '    with lock: sys.stdout.write(line + "\\n"); sys.stdout.flush()', // one whole line at a time
    'def one(host, port):',
    '    s = socket.socket(); s.settimeout(2)',
    '    try:',
    '        s.connect((host, port)); say(f"{host} CONNECTED {s.recv(64).decode().strip()}")',
    '    except OSError as e:',
    '        say(f"{host} FAILED {e.strerror or e}")',
    `ts = [threading.Thread(target=one, args=t) for t in ${JSON.stringify(targets)}]`,
    'for t in ts: t.start()',
    'for t in ts: t.join()',
  ].join('\n');

describe('network', () => {
  it('network off by default: only lo, every destination unreachable', async () => {
    const r = await sbx.run({
      tenant: 'n',
      runtime: 'python',
      code: `print(open("/proc/net/dev").read().count(":"))\n${probe([
        [OUTSIDE_IP, PORT],
        [HOST_SIDE_IP, hostPort],
      ])}`,
    });
    expect(r.stdout.split('\n')[0]).toBe('1');
    expect(r.stdout).not.toContain('CONNECTED');
    expect(r.stdout.match(/Network is unreachable/g)?.length).toBe(2);
  });

  it('network on: the outside is reachable, private ranges and every address of the host are not', async () => {
    const server = serveInNamespace(60);
    await server.ready();
    let accepted = '';
    try {
      const hostIps = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a && a.family === 'IPv4' && !a.internal)
        .map((a) => a!.address);
      const targets: Array<[string, number]> = [[OUTSIDE_IP, PORT], [PRIVATE_IP, PORT], [HOST_SIDE_IP, hostPort], ...hostIps.map((a): [string, number] => [a, hostPort])];
      const r = await sbx.run({
        tenant: 'n',
        runtime: 'python',
        network: true,
        timeout_s: 60,
        code: [
          'import socket, struct',
          'gw = [l.split() for l in open("/proc/net/route").readlines()[1:] if l.split()[1] == "00000000"][0][2]',
          'gwip = socket.inet_ntoa(struct.pack("<L", int(gw, 16)))',
          'print("gateway", gwip, flush=True)',
          probe(targets),
          `one(gwip, ${hostPort})`,
        ].join('\n'),
      });
      const lines = r.stdout.split('\n');
      const gateway = lines[0]!.split(' ')[1]!;
      // Egress to the outside works: the stand-in answered over the egress network.
      expect(lines).toContain(`${OUTSIDE_IP} CONNECTED outside`);
      expect(r.stdout).toMatch(new RegExp(`${PRIVATE_IP.replace(/\./g, '\\.')} FAILED`));
      for (const a of [HOST_SIDE_IP, ...hostIps]) expect(lines.find((l) => l.startsWith(`${a} `))).toMatch(/FAILED/);
      expect(lines.find((l) => l.startsWith(`${gateway} `))).toMatch(/FAILED/);
      expect(hostAccepted).toEqual([]);
    } finally {
      accepted = await server.stop();
    }
    // Only the permitted connection arrived, masqueraded to the host side of the veth.
    expect(accepted.split('\n').filter((l) => l.startsWith('accepted'))).toEqual([`accepted ${HOST_SIDE_IP} ${OUTSIDE_IP}`]);
  });

  it('network on: another sandbox is unreachable', { timeout: 150_000 }, async () => {
    const scope = { tenant: 'n', session: 'listener' };
    const listener = sbx.run({
      ...scope,
      runtime: 'python',
      network: true,
      timeout_s: 60,
      code: [
        'import os, socket, time',
        'me = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); me.connect((' + JSON.stringify(OUTSIDE_IP) + ', 9)); myip = me.getsockname()[0]',
        's = socket.socket(); s.bind(("0.0.0.0", 8080)); s.listen(8); s.settimeout(0.5)',
        'c = socket.create_connection((myip, 8080), 3); a, _ = s.accept(); a.close(); c.close()', // control: the listener works
        'open("ip.txt", "w").write(myip)',
        'foreign = 0; end = time.time() + 40',
        'while time.time() < end and not os.path.exists("done"):',
        '    try:',
        '        a, peer = s.accept(); foreign += 1; a.close()',
        '    except socket.timeout: pass',
        'print("listener", myip, "foreign", foreign)',
      ].join('\n'),
    });
    let peerIp = '';
    for (let i = 0; i < 450 && !peerIp; i++) {
      await new Promise((r) => setTimeout(r, 100));
      peerIp = await sbx.call(sandboxCatalog.filesRead, { ...scope, path: 'ip.txt' }).then(
        (f) => unb64(f.content_base64),
        () => '',
      );
    }
    expect(peerIp).toMatch(/^172\.30\.250\.\d+$/);
    // Another tenant's run: one tenant's runs at once are bounded by its share (run/run-slots.ts), and
    // the listener holds this tenant's one slot here.
    const attacker = await sbx.run({ tenant: 'n-other', runtime: 'python', network: true, timeout_s: 30, code: probe([[peerIp, 8080]]) });
    expect(attacker.stdout).toMatch(/FAILED/);
    await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'done', content_base64: '' });
    const l = await listener;
    expect(l).toMatchObject({ ok: true, stdout: `listener ${peerIp} foreign 0\n` });
  });
});
