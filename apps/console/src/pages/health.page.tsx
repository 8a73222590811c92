import { failureOf } from '../api/api-client.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { useLoad } from '../ui/use-load.js';

interface Readiness {
  status: string;
  nats: boolean;
  services: Record<string, string>;
  failing?: string[];
}

/** What /readyz reports: NATS and each backend service's health subject. A 503 still has the body. */
export function HealthPage() {
  const ready = useLoad(async () => {
    const res = await fetch('/readyz', { cache: 'no-store', credentials: 'omit' });
    if (res.ok || res.status === 503) return { status: res.status, body: (await res.json()) as Readiness };
    throw await failureOf(res);
  });
  const r = ready.data?.body;
  return (
    <section aria-labelledby="health-title">
      <h1 id="health-title">Service health</h1>
      <ErrorBanner error={ready.error} />
      <button type="button" onClick={ready.reload}>
        Check again
      </button>
      {r && (
        <article class="card" aria-labelledby="ready-h">
          <h2 id="ready-h" data-testid="readiness">
            Gateway: {r.status === 'ready' ? 'ready' : `not ready (${(r.failing ?? []).join(', ')})`}
          </h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Part</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">NATS</th>
                <td class={r.nats ? 'ok' : 'failed'}>{r.nats ? 'connected' : 'down'}</td>
              </tr>
              {Object.entries(r.services).map(([name, state]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td class={state === 'ok' ? 'ok' : 'failed'}>{state}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="note">Metrics summaries will join here once the observability issue has landed.</p>
        </article>
      )}
    </section>
  );
}
