#!/usr/bin/env node
// The bare shape of one tool round, the floor the turn-loop bench reads Drael's overhead against:
// a process of its own doing only what any server-side tool loop must (no auth, no validation,
// no metrics, no tracing, no billing, no catalogue). For POST /v1/chat/completions it
//   1. asks the upstream for a stream (node:http, keep-alive) with one function tool,
//   2. reads the SSE answer to its end, joining the tool call's pieces,
//   3. sends the call to `<prefix>.search.query.v1` over NATS in Nest's packet format and waits,
//   4. asks the upstream again with the assistant's call and the tool's answer appended,
//   5. streams that answer's text to the client as chat.completion.chunk events.
// The same hops as the gateway's tool round (upstream → loop → nats-server → tool → nats-server →
// loop → upstream), so `Drael − bare` is what Drael's own code costs on this machine.
// Usage (forked by run.mjs): node bare-loop.mjs <port> <upstream base URL> <NATS prefix>; sends
// { port } over IPC once it listens. NATS_URL as the other benches.
import http from 'node:http';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NATS_URL, root } from '../lib/stack-env.mjs';

const [port, upstreamBase, prefix] = process.argv.slice(2);
const gatewayRequire = createRequire(resolve(root, 'apps/gateway/package.json'));
const { connect } = await import(pathToFileURL(gatewayRequire.resolve('@nats-io/transport-node')).href);
const nc = await connect({ servers: NATS_URL });

const upstreamUrl = new URL(`${upstreamBase}/chat/completions`);
const agent = new http.Agent({ keepAlive: true });
const TOOLS = [
  {
    type: 'function',
    function: { name: 'web_search', description: 'Search the web.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  },
];

/** One streamed upstream turn read to its end: its text and its tool calls. */
function turn(body, onText) {
  return new Promise((resolveTurn, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(upstreamUrl, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      res.setEncoding('utf8');
      const calls = [];
      let buffered = '';
      res.on('data', (text) => {
        buffered += text;
        let end;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
          const delta = JSON.parse(event.slice(6)).choices?.[0]?.delta;
          if (delta?.content) onText?.(delta.content);
          for (const piece of delta?.tool_calls ?? []) {
            const call = (calls[piece.index ?? calls.length] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
            if (piece.id) call.id = piece.id;
            if (piece.function?.name) call.function.name += piece.function.name;
            if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
          }
        }
      });
      res.on('end', () => resolveTurn({ calls }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

let packetId = 0;
/** The tool, as the gateway reaches it: a NATS request in Nest's packet format. */
async function tool(call) {
  const packet = JSON.stringify({ id: String(++packetId), pattern: 'search.query.v1', data: JSON.parse(call.function.arguments) });
  const msg = await nc.request(`${prefix}.search.query.v1`, packet, { timeout: 5000 });
  return JSON.stringify(msg.json().response.result);
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', async () => {
    try {
      const { model, messages } = JSON.parse(Buffer.concat(parts).toString('utf8'));
      const first = await turn({ model, messages, tools: TOOLS, stream: true });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const write = (text) =>
        res.write(
          `data: ${JSON.stringify({ id: 'bare', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`,
        );
      const results = await Promise.all(first.calls.map(tool));
      const next = [
        ...messages,
        { role: 'assistant', content: null, tool_calls: first.calls },
        ...first.calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: results[i] })),
      ];
      await turn({ model, messages: next, tools: TOOLS, stream: true }, write);
      res.end('data: [DONE]\n\n');
    } catch (err) {
      res.destroy(err);
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port), '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
