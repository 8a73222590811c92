// A streaming load generator, in a process of its own so that its CPU is nobody's under test.
// autocannon (load-generator.mjs) counts responses; this one reads every streamed chat completion
// to its end and judges it, and times each stream's first byte and first token.
//
// Each message { id, url, headers, body, connections, durationMs, rampMs, expectText } runs one
// closed-loop load: `connections` workers (started evenly over `rampMs`) each send a request, read
// its stream to the end, and send the next, until `durationMs` has passed; the requests in flight
// then finish. While it runs it sends { id, sample: { open } } every 250 ms (streams open right
// now, for the caller to read the target's memory at the same moment); at the end
// { id, result: { requests, ok, dropped, examples, ttfbMs, ttftMs, durationS, maxOpen } }.
//
// A stream is ok when its status is 200, its last event is `data: [DONE]`, no event carries an
// `error`, and its `delta.content` pieces joined equal `expectText`; anything else is dropped, by
// kind: status, transport (reset, closed before the end, no answer in 120 s), no_done,
// error_event, wrong_text. Times from the request's send: ttfb to the response head (a proxy
// forwards the upstream's head at once; catalogue mode writes its head with the first token), ttft
// to the first chunk that holds a `"content":"tok` piece (the scripted upstream's tokens).
import http from 'node:http';
import { percentile } from './proc-cpu.mjs';

const ANSWER_TIMEOUT_MS = 120_000;

function judge(status, body, expectText) {
  if (status !== 200) return { kind: 'status', why: `${status} ${body.slice(0, 200)}` };
  let text = '';
  let last;
  for (const block of body.split('\n\n')) {
    const line = block.trim();
    if (!line.startsWith('data: ')) continue;
    last = line.slice(6);
    if (last === '[DONE]') continue;
    let event;
    try {
      event = JSON.parse(last);
    } catch {
      return { kind: 'wrong_text', why: `not JSON: ${last.slice(0, 200)}` };
    }
    if (event.error !== undefined) return { kind: 'error_event', why: JSON.stringify(event.error).slice(0, 200) };
    text += event.choices?.[0]?.delta?.content ?? '';
  }
  if (last !== '[DONE]') return { kind: 'no_done', why: body.slice(-200) };
  if (text !== expectText) return { kind: 'wrong_text', why: `${text.length} characters: ${text.slice(0, 80)}...` };
  return undefined;
}

function oneStream(m, agent) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let ttfb;
    let ttft;
    let body = '';
    let done = false;
    const finish = (r) => {
      if (done) return;
      done = true;
      resolve(r);
    };
    const req = http.request(m.url, { method: 'POST', agent, headers: { ...m.headers, 'content-length': Buffer.byteLength(m.body) } }, (res) => {
      ttfb = performance.now() - t0;
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
        if (ttft === undefined && body.includes('"content":"tok')) ttft = performance.now() - t0;
      });
      res.on('end', () => {
        const failure = judge(res.statusCode, body, m.expectText);
        finish(failure ?? { ttfb, ttft });
      });
      res.on('close', () => finish({ kind: 'transport', why: `closed after ${body.length} bytes, before the end` }));
      res.on('error', (err) => finish({ kind: 'transport', why: err.message }));
    });
    req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    req.on('error', (err) => finish({ kind: 'transport', why: err.message }));
    req.end(m.body);
  });
}

async function run(m) {
  // A fresh keep-alive agent per load: no socket a server closed while idle is reused.
  const agent = new http.Agent({ keepAlive: true, maxSockets: m.connections });
  const started = performance.now();
  const until = started + m.durationMs;
  const ttfbs = [];
  const ttfts = [];
  const dropped = { status: 0, transport: 0, no_done: 0, error_event: 0, wrong_text: 0 };
  const examples = [];
  let requests = 0;
  let open = 0;
  let maxOpen = 0;
  const sampler = setInterval(() => process.send({ id: m.id, sample: { open } }), 250);
  const worker = async (i) => {
    await new Promise((r) => setTimeout(r, (m.rampMs * i) / m.connections));
    while (performance.now() < until) {
      open++;
      if (open > maxOpen) maxOpen = open;
      const r = await oneStream(m, agent);
      open--;
      requests++;
      if (r.kind) {
        dropped[r.kind]++;
        if (examples.length < 5) examples.push(`${r.kind}: ${r.why}`);
      } else {
        ttfbs.push(r.ttfb);
        ttfts.push(r.ttft);
      }
    }
  };
  await Promise.all(Array.from({ length: m.connections }, (_, i) => worker(i)));
  clearInterval(sampler);
  agent.destroy();
  const quantiles = (xs) => ({ p50: percentile(xs, 50), p99: percentile(xs, 99) });
  return {
    requests,
    ok: ttfbs.length,
    dropped,
    examples,
    ttfbMs: quantiles(ttfbs),
    ttftMs: quantiles(ttfts),
    durationS: (performance.now() - started) / 1000,
    maxOpen,
  };
}

process.on('message', async (m) => process.send({ id: m.id, result: await run(m) }));
process.send({ ready: true });
