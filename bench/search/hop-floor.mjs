// bench/search/hop-floor.mjs: what the hops on the uncached search path cost on this machine
// before any Drael code runs, beside SearXNG's own median in the same run.
//
// The uncached path is client → gateway → nats-server → search service → SearXNG and back. Beside a
// direct call to SearXNG it adds two node wake-ups per direction (gateway, search service) and one
// pass through nats-server per direction; every one of them starts from an idle wait as long as
// SearXNG takes. This measures those pieces bare, after an idle wait and back to back:
//   1. a TCP ping-pong between two node processes (one wake-up each way);
//   2. one message through nats-server, raw protocol (PUB on one connection, MSG on another);
//   3. a nats.js request/reply with both ends in this process (two passes through nats-server);
//   4. SearXNG direct (fresh connection per query, as Debian's searx closes them), unique queries.
// Usage: node bench/search/hop-floor.mjs [--n 200] [--idle 25]
// Needs: NATS on 127.0.0.1:4222 (NATS_URL), the local searx (started here via infra/searx).
import '../lib/ends-with-bench.mjs';
import { execFileSync, fork } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { numberOption } from '../lib/cli-options.mjs';

const N = numberOption('n', 200);
const IDLE_MS = numberOption('idle', 25);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const natsUrl = new URL((process.env.NATS_URL ?? 'nats://127.0.0.1:4222').replace(/^nats:/, 'http:'));
const SEARXNG_URL = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (ms) => `${ms.toFixed(3)} ms`;

async function idleAndHot(once) {
  const idle = [];
  const hot = [];
  for (let i = 0; i < N; i++) {
    await sleep(IDLE_MS);
    idle.push(await once());
    hot.push(await once());
  }
  return { idle: median(idle), hot: median(hot) };
}

if (process.argv[2] === 'echo-server') {
  const srv = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('data', (d) => s.write(d));
  });
  srv.listen(0, '127.0.0.1', () => process.send(srv.address().port));
} else {
  execFileSync('bash', [`${repo}/infra/searx/start-local.sh`], { stdio: 'inherit' });

  // 1. node ↔ node
  const echo = fork(fileURLToPath(import.meta.url), ['echo-server']);
  const port = await new Promise((r) => echo.once('message', r));
  const sock = net.connect(port, '127.0.0.1');
  sock.setNoDelay(true);
  await new Promise((r) => sock.once('connect', r));
  const tcp = await idleAndHot(
    () =>
      new Promise((r) => {
        const t = performance.now();
        sock.once('data', () => r(performance.now() - t));
        sock.write('x');
      }),
  );
  sock.destroy();
  echo.kill();

  // 2. one pass through nats-server, raw protocol
  const openRaw = () =>
    new Promise((r) => {
      const s = net.connect(Number(natsUrl.port || 4222), natsUrl.hostname);
      s.setNoDelay(true);
      s.once('data', () => {
        s.write('CONNECT {"verbose":false,"pedantic":false}\r\n');
        r(s);
      });
    });
  const pub = await openRaw();
  const sub = await openRaw();
  const subject = `bench.hopfloor.${process.pid}`;
  sub.write(`SUB ${subject} 1\r\nPING\r\n`);
  await new Promise((r) => sub.once('data', r));
  const pass = await idleAndHot(
    () =>
      new Promise((r) => {
        const t = performance.now();
        sub.once('data', () => r(performance.now() - t));
        pub.write(`PUB ${subject} 1\r\nx\r\n`);
      }),
  );
  pub.destroy();
  sub.destroy();

  // 3. nats.js request/reply, both ends here
  const { connect } = await import(`${repo}/packages/nats-rpc/node_modules/@nats-io/transport-node/lib/mod.js`);
  const requester = await connect({ servers: `${natsUrl.hostname}:${natsUrl.port || 4222}` });
  const responder = await connect({ servers: `${natsUrl.hostname}:${natsUrl.port || 4222}` });
  responder.subscribe(`${subject}.rpc`, { callback: (_e, m) => m.respond('y') });
  await responder.flush();
  const rpc = await idleAndHot(async () => {
    const t = performance.now();
    await requester.request(`${subject}.rpc`, 'x', { timeout: 2000 });
    return performance.now() - t;
  });
  await requester.close();
  await responder.close();

  // 4. SearXNG direct, same run
  const direct = [];
  for (let i = 0; i < Math.min(N, 100); i++) {
    const q = new URLSearchParams({ q: `drael zznonce-hopfloor-${process.pid}-${i}`, format: 'json', categories: 'general' });
    const t = performance.now();
    await new Promise((resolve, reject) => {
      http
        .get(`${SEARXNG_URL}/search?${q}`, (res) => {
          res.on('data', () => undefined);
          res.on('end', resolve);
        })
        .on('error', reject);
    });
    direct.push(performance.now() - t);
  }
  const sx = median(direct);

  console.log(
    `bench/search/hop-floor  (${new Date().toISOString()}, node ${process.version}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; n=${N}, idle ${IDLE_MS} ms)`,
  );
  console.log(`node ↔ node TCP round trip    : after idle ${fmt(tcp.idle)}, back to back ${fmt(tcp.hot)}`);
  console.log(`one message through nats-server: after idle ${fmt(pass.idle)}, back to back ${fmt(pass.hot)}`);
  console.log(`nats.js request/reply (in-proc): after idle ${fmt(rpc.idle)}, back to back ${fmt(rpc.hot)}`);
  console.log(`SearXNG direct                 : median ${fmt(sx)} (n=${direct.length})`);
  // Beyond what a direct call crosses (client → SearXNG → client, matched by search → SearXNG →
  // search), the uncached path adds six one-way legs, each waking an idle process: client →
  // gateway and gateway → client (one node round trip), gateway → nats-server → search and back
  // (two passes through nats-server, each two legs).
  const floor = tcp.idle + 2 * pass.idle;
  console.log(
    `floor of the added hops alone (client↔gateway round trip + two passes through nats-server, after idle): ` +
      `${fmt(floor)} = ${((floor / sx) * 100).toFixed(1)}% of SearXNG's median (the target allows 10% in all)`,
  );
  process.exit(0);
}
