// What stands outside Drael in the chaos run, each on a real loopback socket: the model (the test
// support's scripted upstream, answering by what each request asks for, since many callers share
// it), a breach-lookup provider (paid tool), and a page server for /v1/tools/fetch.
import { createServer } from 'node:http';
import { startScriptedUpstream } from '../../packages/test-support/dist/index.js';

/** The user message's marker picks the tool the model calls first; after a tool message it answers. */
export const ASK = {
  runCode: (n) => `chaos:run_code ${n}`,
  search: (q) => `chaos:web_search ${q}`,
  breach: (q) => `chaos:breach ${q}`,
  agentTask: (n) => `chaos:agent ${n}`,
};

/**
 * The program a chat's run_code runs in its session: appends its number to log.txt and writes
 * f<n>.txt, so the files written by every completed run can be checked after a replica died.
 */
export const sessionProgram = (n) => `echo ${n} >> log.txt && echo ${n} > f${n}.txt && echo ran ${n}`;

function firstCall(text) {
  const [marker, arg] = text.split(' ');
  switch (marker) {
    case 'chaos:run_code':
      return { name: 'run_code', arguments: JSON.stringify({ runtime: 'bash', code: sessionProgram(arg) }) };
    case 'chaos:web_search':
      return { name: 'web_search', arguments: JSON.stringify({ query: `drael chaos ${arg}` }) };
    case 'chaos:breach':
      return { name: 'breach_lookup', arguments: JSON.stringify({ query: `${arg}@example.com` }) };
    case 'chaos:agent':
      return { name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'python', code: `print(6 * ${Number(arg) % 100})` }) };
    default:
      return undefined;
  }
}

export function startModelDouble() {
  return startScriptedUpstream({
    turns: [],
    choose: (body) => {
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const last = messages.at(-1);
      const user = messages.findLast((m) => m.role === 'user');
      const call = last?.role === 'user' && typeof user?.content === 'string' ? firstCall(user.content) : undefined;
      // A tool call's turn streams a little text first, so a kill can land mid-stream.
      if (call && Array.isArray(body.tools) && body.tools.some((t) => t.function?.name === call.name)) {
        return { type: 'tool_calls', content: ['working '], calls: [call], chunkDelayMs: 50 };
      }
      return { type: 'text', content: ['chaos ', 'answer'], chunkDelayMs: 100 };
    },
  });
}

function listen(server, host) {
  return new Promise((resolve) => server.listen(0, host, () => resolve(`http://${host}:${server.address().port}`)));
}

/** A breach provider (POST {query} → {results}); every lookup finds one breach, so each charges 1 unit. */
export async function startBreachProvider() {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [{ name: 'ChaosLeak', date: '2026-01-01' }] }));
    });
  });
  const url = await listen(server, '127.0.0.1');
  return { url: `${url}/breach`, calls: () => calls, close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))) };
}

// The fetch service's SSRF guard refuses loopback; FETCH_TEST_ALLOW_CIDRS opens this one address
// (as apps/fetch/test/support/fixtures.ts does), 127.0.0.1 stays blocked.
export const PAGE_HOST = '127.0.0.2';

/** An article page per path, for /v1/tools/fetch (http render: the replicas run without Chromium). */
export async function startPageServer() {
  const server = createServer((req, res) => {
    const n = (req.url ?? '/').replace(/[^0-9a-z]/gi, '');
    const body = `<!doctype html><html><head><title>Chaos page ${n}</title></head><body><article><h1>Chaos page ${n}</h1>${'<p>Replicas come and go; the page stays the same. </p>'.repeat(20)}</article></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  const url = await listen(server, PAGE_HOST);
  return { url, close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))) };
}
