// The baseline: a naive Node pipe proxy. Every request is piped to the upstream and the answer
// piped back, untouched (no parsing, no validation, no logging). Usage: node naive-proxy.mjs <port> <upstream-port>
import http from 'node:http';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const server = http.createServer((req, res) => {
  const up = http.request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent }, (upRes) => {
    res.writeHead(upRes.statusCode ?? 502, upRes.headers);
    upRes.pipe(res);
  });
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => up.destroy());
  req.pipe(up);
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => process.exit(0));
