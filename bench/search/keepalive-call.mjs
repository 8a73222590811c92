// The HTTP client every search bench measures with: node:http, one keep-alive agent (one socket)
// per origin, the gateway and SearXNG alike. undici's fetch() costs the client about 1 ms more per
// POST than per GET on these machines, which is the client's cost, not the gateway's.
import http from 'node:http';

const agents = new Map();

/** One request; resolves with {status, headers, text} once the whole body is in. */
export function call(url, { method = 'GET', headers = {}, body } = {}) {
  const u = new URL(url);
  let agent = agents.get(u.origin);
  if (!agent) agents.set(u.origin, (agent = new http.Agent({ keepAlive: true, maxSockets: 1 })));
  const data = body === undefined ? undefined : Buffer.from(body);
  return new Promise((resolve, reject) => {
    const req = http.request(u, { method, agent, headers: data ? { ...headers, 'content-length': data.length } : headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}
