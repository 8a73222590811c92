// The clients of the chaos run. Each driver owns one account (its key, agent and session) and loops
// over the mix the issue asks for, through whichever gateway is alive: catalogue-mode chats whose
// model calls run_code in the driver's session, web_search, or the paid breach_lookup (credit held
// and settled); POST /v1/tools/fetch and /v1/tools/search; and a hosted agent run (POST
// /v1/agents/{id}/runs; the run itself is checked after the drive). Every request is recorded with
// how it ended; streamed chats ask for tool frames (x-drael-tool-events), so the record holds what
// each tool did as the client saw it: the files a run_code wrote, the units a paid call charged.
import { ASK } from './doubles.mjs';
import { MODEL } from './stack.mjs';

// A request still open this long is counted as hung (the bound the issue sets is 10 s after a kill).
export const CLIENT_ABORT_MS = 60_000;
const KINDS = ['chat_run_code', 'chat_search', 'chat_breach', 'tools_fetch', 'tools_search', 'agent_run'];

function chatBody(text) {
  return JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: text }], stream: true });
}

/** What each kind sends: [path, extra headers, body]. `n` numbers the driver's requests. */
function requestOf(kind, account, n, pages) {
  switch (kind) {
    case 'chat_run_code':
      return ['/v1/chat/completions', { 'x-drael-tool-events': '1', 'x-drael-session': account.session }, chatBody(ASK.runCode(n))];
    case 'chat_search':
      return ['/v1/chat/completions', { 'x-drael-tool-events': '1' }, chatBody(ASK.search(n % 40))];
    case 'chat_breach':
      return ['/v1/chat/completions', { 'x-drael-tool-events': '1' }, chatBody(ASK.breach(`${account.session}-${n}`))];
    case 'tools_fetch':
      // A path of its own each time: the fetch cache (Redis, 15 min) would answer a repeat.
      return ['/v1/tools/fetch', {}, JSON.stringify({ url: `${pages.url}/p${account.session}x${n}` })];
    case 'tools_search':
      return ['/v1/tools/search', {}, JSON.stringify({ query: `drael chaos ${n % 40}` })];
    case 'agent_run':
      return [`/v1/agents/${account.agentId}/runs`, { 'idempotency-key': `chaos-run-${account.session}-${n}` }, JSON.stringify({ task: ASK.agentTask(n) })];
  }
  throw new Error(`unknown kind ${kind}`);
}

/**
 * A streamed chat's events: `done` when [DONE] came, the typed error event of a failure after the
 * stream began, and the tool frames (tool_done: tool, ok, result as the model saw it).
 */
function readStream(text) {
  const out = { done: false, code: null, tools: [] };
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    if (data === '[DONE]') {
      out.done = true;
      continue;
    }
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      out.code = 'not_json';
      continue;
    }
    if (event.error) out.code = event.error.code ?? 'untyped_error_event';
    const frame = event.choices?.[0]?.delta?.drael;
    if (frame?.event === 'tool_done' && !frame.agent) out.tools.push({ tool: frame.tool, ok: frame.ok, result: frame.result });
  }
  return out;
}

/** One request, recorded: outcome is ok | typed | transport | untyped | truncated | hung. */
async function send(gw, account, kind, n, pages, driver, requests) {
  const [path, extra, body] = requestOf(kind, account, n, pages);
  const rec = { kind, gw: gw.name, driver, n, requestId: `chaos-${account.session}-${n}`, start: Date.now(), end: 0, status: 0, code: null, outcome: null, tools: [] };
  // Recorded before it is sent, so a request that never ends is seen as open.
  requests.push(rec);
  try {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { ...account.headers, 'x-request-id': rec.requestId, ...extra },
      body,
      signal: AbortSignal.timeout(CLIENT_ABORT_MS),
    });
    rec.status = res.status;
    const text = await res.text();
    if (res.status >= 400) {
      try {
        rec.code = JSON.parse(text).error?.code ?? null;
      } catch {
        rec.code = 'not_json';
      }
      rec.outcome = rec.code && rec.code !== 'not_json' ? 'typed' : 'untyped';
    } else if (path === '/v1/chat/completions') {
      const s = readStream(text);
      rec.tools = s.tools;
      rec.code = s.code;
      rec.outcome = s.code ? (s.code === 'not_json' || s.code === 'untyped_error_event' ? 'untyped' : 'typed') : s.done ? 'ok' : 'truncated';
    } else {
      rec.outcome = 'ok';
      if (kind === 'agent_run') rec.runId = JSON.parse(text).id;
    }
  } catch (err) {
    if (err?.name === 'TimeoutError') {
      rec.outcome = 'hung';
      rec.code = 'client_abort';
    } else {
      rec.outcome = 'transport';
      rec.code = `transport:${err?.cause?.code ?? err?.name}`;
    }
  }
  rec.end = Date.now();
  return rec;
}

/**
 * Starts `accounts.length` drivers; `stop()` lets each finish its request in flight and resolves
 * with every request's record. A driver picks a live gateway for each request (a killed one is
 * marked dead by the disruption that killed it).
 */
export function startDrivers({ accounts, gateways, pages }) {
  const requests = [];
  let stopping = false;
  const drive = async (driver) => {
    const account = accounts[driver];
    for (let n = driver; !stopping; n++) {
      const live = gateways.filter((g) => g.alive);
      // Not n % 2 alone: with six kinds that would send each kind to one gateway only.
      const gw = live[(n + Math.floor(n / KINDS.length)) % live.length];
      await send(gw, account, KINDS[n % KINDS.length], n, pages, driver, requests);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const running = accounts.map((_, i) => drive(i));
  return {
    requests,
    stop: async () => {
      stopping = true;
      await Promise.all(running);
      return requests;
    },
  };
}
