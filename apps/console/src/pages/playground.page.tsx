import { useRef, useState } from 'preact/hooks';
import { isSessionId } from '@drael/contracts/session-id';
import { ApiFailure, getJson, request } from '../api/api-client.js';
import { readEvents } from '../api/sse-reader.js';
import { applyChunk, emptyStream, type StreamState } from '../playground/stream-state.js';
import { SessionFiles } from '../playground/session-files.js';
import { SubAgentCardView, ToolCardView } from '../playground/tool-card.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { useLoad } from '../ui/use-load.js';

type Message = { role: 'user' | 'assistant'; content: string };

/**
 * A catalogue-mode chat (no `tools` in the request: Drael runs the tool loop), streamed with
 * `x-drael-tool-events: 1` so each tool call and sub-agent shows as a card while it runs.
 */
export function PlaygroundPage() {
  const models = useLoad(() => getJson<{ data: { id: string }[] }>('/v1/models'));
  const [model, setModel] = useState('');
  const [session, setSession] = useState('');
  const [draft, setDraft] = useState('');
  const [history, setHistory] = useState<Message[]>([]);
  const [live, setLive] = useState<StreamState>();
  const [error, setError] = useState<unknown>();
  const [filesVersion, setFilesVersion] = useState(0);
  const abort = useRef<AbortController | undefined>(undefined);

  const alias = model || models.data?.data[0]?.id || '';
  const sessionOk = session === '' || isSessionId(session);
  const running = !!live && !live.done;

  const send = async (e: Event) => {
    e.preventDefault();
    if (!draft.trim() || !alias || !sessionOk) return;
    const messages: Message[] = [...history, { role: 'user', content: draft }];
    setHistory(messages);
    setDraft('');
    setError(undefined);
    let state = emptyStream();
    setLive(state);
    abort.current = new AbortController();
    try {
      const res = await request('/v1/chat/completions', {
        method: 'POST',
        json: { model: alias, messages, stream: true, stream_options: { include_usage: true } },
        headers: { 'x-drael-tool-events': '1', ...(session ? { 'x-drael-session': session } : {}) },
        signal: abort.current.signal,
      });
      await readEvents(res, (ev) => {
        state = applyChunk(state, ev.data);
        setLive(state);
      });
      state = { ...state, done: true };
      setLive(state);
      if (state.text) setHistory([...messages, { role: 'assistant', content: state.text }]);
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError(err);
      setLive({ ...state, done: true });
    } finally {
      setFilesVersion((v) => v + 1);
    }
  };

  return (
    <section aria-labelledby="pg-title">
      <h1 id="pg-title">Playground</h1>
      <ErrorBanner error={models.error} />
      <form onSubmit={(e) => void send(e)} class="card">
        <div class="row">
          <label for="model">Model alias</label>
          <select id="model" value={alias} onChange={(e) => setModel((e.target as HTMLSelectElement).value)}>
            {models.data?.data.map((m) => (
              <option key={m.id} value={m.id}>
                {m.id}
              </option>
            ))}
          </select>
          <label for="session">Session (optional)</label>
          <input
            id="session"
            value={session}
            placeholder="my-session"
            aria-invalid={!sessionOk}
            aria-describedby="session-help"
            onInput={(e) => setSession((e.target as HTMLInputElement).value.trim())}
          />
        </div>
        <p id="session-help" class="note">
          A named session keeps its files across requests (letters, digits, _ and -); without one each request gets a throwaway workspace.
        </p>
        <label for="prompt">Message</label>
        <textarea id="prompt" rows={3} value={draft} onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)} />
        <div class="row">
          <button type="submit" disabled={running || !draft.trim() || !alias || !sessionOk}>
            Send
          </button>
          <button type="button" class="quiet" disabled={!running} onClick={() => abort.current?.abort()}>
            Stop
          </button>
          <button type="button" class="quiet" disabled={running} onClick={() => (setHistory([]), setLive(undefined))}>
            New chat
          </button>
        </div>
      </form>
      <ErrorBanner error={error} />
      <div class="transcript" aria-live="polite">
        {history.map((m, i) => (
          <div key={i} class={`msg ${m.role}`}>
            <span class="label">{m.role === 'user' ? 'You' : 'Assistant'}</span>
            <p>{m.content}</p>
          </div>
        ))}
      </div>
      {live && <LiveAnswer state={live} />}
      {session && sessionOk && <SessionFiles session={session} version={filesVersion} />}
    </section>
  );
}

function LiveAnswer({ state }: { state: StreamState }) {
  return (
    <section class="card" aria-labelledby="live-h">
      <h2 id="live-h">This answer</h2>
      <p class="stats" data-testid="stats">
        <span data-testid="turns">{state.turns} turn(s)</span>
        {state.usage && (
          <span data-testid="usage">
            {' '}
            · {state.usage.prompt_tokens} prompt + {state.usage.completion_tokens} completion = {state.usage.total_tokens} tokens
          </span>
        )}
        {state.finishReason && <span> · finish: {state.finishReason}</span>}
        {!state.done && <span> · streaming…</span>}
      </p>
      {state.error && <ErrorBanner error={new ApiFailure(state.error.message, 0, state.error.code ?? null, state.error.type ?? null, null)} />}
      <div class="cards">{state.cards.map((c) => (c.kind === 'tool' ? <ToolCardView key={c.id} card={c} /> : <SubAgentCardView key={c.id} card={c} />))}</div>
      {!state.done && state.text && (
        <div class="msg assistant">
          <span class="label">Assistant</span>
          <p>{state.text}</p>
        </div>
      )}
    </section>
  );
}
