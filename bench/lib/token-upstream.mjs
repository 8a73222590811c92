// A scripted OpenAI chat-completions upstream that streams like a real model: each token is its
// own SSE event in its own socket write, the next one written on a later turn of the event loop
// (setImmediate), so a proxy reads them one by one as it would from a model. In a process of its own.
// The model name picks the answer's length: `t<N>` answers N tokens ("tok0 tok1 ..."), default 20.
// `tool-t<N>`: the first turn calls web_search({"query":"bench"}); after a tool message, N tokens of text.
// Non-streaming requests get one chat.completion object with the same text and usage.
// Paced (`--gap-ms MIN:MAX`, e.g. 50:100): a model's speed instead of the event loop's. The head and
// the role event leave at once, the first token exactly MIN ms later (so time to first token has a
// fixed floor to subtract), every further token, the finish and [DONE] a uniform MIN..MAX ms apart:
// a stream stays open for its whole length, as a model's does.
// Usage: node token-upstream.mjs [port] [--gap-ms MIN:MAX]   (sends { port } over IPC when listening)
import http from 'node:http';
import { option } from './cli-options.mjs';

const created = Math.floor(Date.now() / 1000);
const tokenCount = (model) => Number(/t(\d+)$/.exec(model)?.[1] ?? 20);
const texts = new Map();
const textOf = (n) =>
  texts.get(n) ??
  (texts.set(
    n,
    Array.from({ length: n }, (_, i) => `tok${i} `),
  ),
  texts.get(n));
const event = (model, delta, finish = null) =>
  `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`;
const usage = (n) => ({ prompt_tokens: 12, completion_tokens: n, total_tokens: 12 + n });
const [gapMin, gapMax] = option('gap-ms', '0:0').split(':').map(Number);
if (!(gapMin >= 0 && gapMax >= gapMin)) throw new Error('--gap-ms MIN:MAX, 0 <= MIN <= MAX');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** The wait before event `i` of a stream's body (0: its first token). */
const nextTurn = gapMax === 0 ? () => new Promise((r) => setImmediate(r)) : (i) => sleep(i === 0 ? gapMin : gapMin + Math.random() * (gapMax - gapMin));

async function stream(res, model, pieces, toolCall, includeUsage, n) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(event(model, { role: 'assistant', content: '' }));
  let i = 0;
  for (const p of pieces) {
    await nextTurn(i++);
    if (res.destroyed) return;
    res.write(event(model, { content: p }));
  }
  await nextTurn(i++);
  if (res.destroyed) return;
  if (toolCall) {
    res.write(event(model, { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'web_search', arguments: '{"query":"bench"}' } }] }));
    await nextTurn(i++);
    if (res.destroyed) return;
  }
  res.write(event(model, {}, toolCall ? 'tool_calls' : 'stop'));
  if (includeUsage)
    res.write(
      `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[],"usage":${JSON.stringify(usage(n))}}\n\n`,
    );
  res.end('data: [DONE]\n\n');
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const model = String(body.model ?? 't20');
    const toolCall = model.startsWith('tool-') && body.messages?.at(-1)?.role !== 'tool';
    const n = toolCall ? 0 : tokenCount(model);
    const pieces = textOf(n);
    if (body.stream === true) {
      void stream(res, model, pieces, toolCall, body.stream_options?.include_usage === true, n);
      return;
    }
    const message = toolCall
      ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'web_search', arguments: '{"query":"bench"}' } }] }
      : { role: 'assistant', content: pieces.join('') };
    const text = JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, finish_reason: toolCall ? 'tool_calls' : 'stop', logprobs: null }],
      usage: usage(n),
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 60_000;
const portArg = Number(process.argv[2]);
server.listen(Number.isInteger(portArg) ? portArg : 0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('SIGTERM', () => process.exit(0));
