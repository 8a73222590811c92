import { useEffect, useState } from 'preact/hooks';
import type { Run, RunStep } from '@drael/contracts';
import { getJson, request } from '../api/api-client.js';
import { readEvents } from '../api/sse-reader.js';
import { verifyChain, type ChainVerdict, type ReceiptBundle } from '../receipts/verify-chain.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { usd, when } from '../ui/format.js';
import { useLoad } from '../ui/use-load.js';

const TERMINAL = new Set(['succeeded', 'failed', 'budget_exceeded', 'step_limit_reached', 'timed_out', 'cancelled']);

/** One run: its live events (SSE), the step timeline with costs, and its receipts verified here. */
export function RunPage({ runId }: { runId: string }) {
  const path = `/v1/runs/${encodeURIComponent(runId)}`;
  const run = useLoad(() => getJson<Run>(path), [runId]);
  const steps = useLoad(() => getJson<{ data: RunStep[] }>(`${path}/steps`), [runId]);
  const [events, setEvents] = useState<{ id: string; type: string; data: string }[]>([]);
  const [streamError, setStreamError] = useState<unknown>();
  const [streaming, setStreaming] = useState(false);

  useEffect(() => {
    const ctl = new AbortController();
    setEvents([]);
    setStreaming(true);
    void (async () => {
      try {
        const res = await request(`${path}/events`, { signal: ctl.signal, headers: { accept: 'text/event-stream' } });
        await readEvents(res, (e) => {
          setEvents((list) => [...list, { id: e.id ?? '', type: e.event ?? 'message', data: e.data }]);
          if (e.event === 'error') setStreamError(new Error(e.data));
          if (e.event === 'run.step' || e.event === 'run.done') steps.reload();
          if (e.event === 'run.done' || e.event === 'run.status') run.reload();
        });
      } catch (err) {
        if ((err as Error).name !== 'AbortError') setStreamError(err);
      } finally {
        setStreaming(false);
      }
    })();
    return () => ctl.abort();
  }, [runId]);

  const r = run.data;
  const finished = !!r && TERMINAL.has(r.status);
  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title">Run {runId}</h1>
      <p>
        <a href={r ? `#/agents/${encodeURIComponent(r.agent_id)}` : '#/agents'}>Back to the agent</a>
      </p>
      <ErrorBanner error={run.error ?? steps.error ?? streamError} />
      {r && (
        <article class="card" aria-labelledby="run-h">
          <h2 id="run-h">Status</h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd data-testid="run-status">{r.status}</dd>
            <dt>Task</dt>
            <dd>{r.task}</dd>
            <dt>Steps</dt>
            <dd>{r.step_count}</dd>
            <dt>Spent</dt>
            <dd>
              {usd(r.spent_usd)} of {usd(r.budget_usd)}
            </dd>
            <dt>Started · finished</dt>
            <dd>
              {when(r.started_at)} · {when(r.finished_at)}
            </dd>
            {r.output !== null && (
              <>
                <dt>Output</dt>
                <dd data-testid="run-output">{r.output}</dd>
              </>
            )}
            {r.error && (
              <>
                <dt>Error</dt>
                <dd>
                  {r.error.code}: {r.error.message}
                </dd>
              </>
            )}
          </dl>
        </article>
      )}
      <article class="card" aria-labelledby="steps-h">
        <h2 id="steps-h">Step timeline</h2>
        <ol class="timeline" data-testid="steps">
          {steps.data?.data.map((s) => (
            <li key={s.sequence} class={s.status}>
              <strong>
                #{s.sequence} {s.kind}
              </strong>{' '}
              <span class="badge">{s.status}</span> <span>{usd(s.cost_usd)}</span> <span class="note">{when(s.created_at)}</span>
              {Object.keys(s.detail).length > 0 && <pre class="detail">{JSON.stringify(s.detail)}</pre>}
            </li>
          ))}
        </ol>
        {steps.data?.data.length === 0 && <p>No steps yet.</p>}
      </article>
      <article class="card" aria-labelledby="events-h">
        <h2 id="events-h">Live events {streaming ? '(streaming)' : '(stream closed)'}</h2>
        <ol class="events" aria-live="polite" data-testid="events">
          {events.map((e, i) => (
            <li key={i}>
              <code>{e.type}</code> <span class="note">{e.data.length > 200 ? `${e.data.slice(0, 200)}…` : e.data}</span>
            </li>
          ))}
        </ol>
      </article>
      <ReceiptsCheck runId={runId} finished={finished} receiptCount={r?.receipt_count ?? 0} />
    </section>
  );
}

function ReceiptsCheck({ runId, finished, receiptCount }: { runId: string; finished: boolean; receiptCount: number }) {
  const [verdict, setVerdict] = useState<ChainVerdict & { signedWith: string }>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const check = async () => {
    setBusy(true);
    setError(undefined);
    setVerdict(undefined);
    try {
      const [key, bundle] = await Promise.all([
        getJson<{ keys: Array<{ key_id: string; public_key: string }> }>('/v1/receipts/public-key'),
        getJson<ReceiptBundle>(`/v1/runs/${encodeURIComponent(runId)}/receipts`),
      ]);
      // The keys the run's signatures name: two when it ran through a key rotation.
      const signedWith = [...new Set([...bundle.receipts.map((r) => r.key_id), ...(bundle.run_end ? [bundle.run_end.key_id] : [])])].join(', ');
      setVerdict({ ...(await verifyChain(bundle, key.keys)), signedWith });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    if (finished) void check();
  }, [finished, runId]);

  return (
    <article class="card" aria-labelledby="receipts-h">
      <h2 id="receipts-h">Receipts, verified in this browser</h2>
      <p class="note">
        Ed25519 signatures checked by the browser's WebCrypto against the key from /v1/receipts/public-key; each receipt's keccak256 hash and the chain head recomputed here from
        the receipts' own bytes. {receiptCount} receipt(s) so far.
      </p>
      <button type="button" onClick={() => void check()} disabled={busy}>
        {busy ? 'Verifying…' : 'Verify again'}
      </button>
      <ErrorBanner error={error} />
      {verdict && (
        <div data-testid="receipts-verdict" role="status">
          {verdict.valid ? (
            <p class="pass">
              <strong>Chain verified:</strong> {verdict.links.length - 1} receipt(s), signed run end, head {verdict.head.slice(0, 16)}… (key {verdict.signedWith})
            </p>
          ) : (
            <p class="fail">
              <strong>Chain broken.</strong> First broken link: <span data-testid="first-broken">{verdict.firstBroken}</span>
            </p>
          )}
          <ol class="links">
            {verdict.links.map((l) => (
              <li key={l.index} class={l.ok ? 'ok' : 'failed'}>
                {l.index === -1 ? 'Run end' : `Receipt ${l.index}`}: {l.ok ? 'ok' : l.problems.join('; ')}
              </li>
            ))}
          </ol>
        </div>
      )}
    </article>
  );
}
