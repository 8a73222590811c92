import { failureOf } from '../api/api-client.js';
import { loadCredential } from '../api/credential.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { useLoad } from '../ui/use-load.js';

/** A model deployment as /readyz reports it (the gateway's DeploymentReportSchema; never its key or URL). */
interface Deployment {
  alias: string;
  priority: number;
  weight: number;
  state: 'healthy' | 'cooling' | 'probing';
  cooling_until?: string;
  reason?: string;
  in_flight: number;
  attempts: number;
  successes: number;
  failures: Record<string, number>;
  cooldowns: number;
}

interface Readiness {
  status: string;
  nats: boolean;
  services: Record<string, string>;
  failing?: string[];
  degraded?: string[];
  deployments?: Record<string, Deployment>;
}

const failuresOf = (d: Deployment) => Object.values(d.failures).reduce((a, b) => a + b, 0);

/**
 * What /readyz reports: NATS, each backend service's health subject, and each model deployment's
 * state (issue 24: healthy, cooling with its reason and end, or probing back in; shared by every
 * gateway replica through Redis). A 503 still has the body.
 */
export function HealthPage() {
  const ready = useLoad(async () => {
    // The operator's token: without it /readyz says only what is up (no errors, no deployments).
    const cred = loadCredential();
    const res = await fetch('/readyz', { cache: 'no-store', credentials: 'omit', headers: cred ? { authorization: `Bearer ${cred.secret}` } : {} });
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
            Gateway: {r.status === 'ready' ? 'ready' : r.status === 'degraded' ? `degraded (${(r.degraded ?? []).join(', ')} down)` : `not ready (${(r.failing ?? []).join(', ')})`}
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
          {r.deployments && (
            <>
              <h2 id="deployments-h">Model deployments</h2>
              <table aria-labelledby="deployments-h" data-testid="deployments">
                <thead>
                  <tr>
                    <th scope="col">Deployment</th>
                    <th scope="col">Alias</th>
                    <th scope="col">Priority / weight</th>
                    <th scope="col">State</th>
                    <th scope="col">Attempts / failures</th>
                  </tr>
                </thead>
                <tbody>
                  {Object.entries(r.deployments).map(([name, d]) => (
                    <tr key={name}>
                      <th scope="row">{name}</th>
                      <td>{d.alias}</td>
                      <td>
                        {d.priority} / {d.weight}
                      </td>
                      <td class={d.state === 'healthy' ? 'ok' : 'failed'}>
                        {d.state}
                        {d.cooling_until ? ` until ${new Date(d.cooling_until).toLocaleTimeString()}` : ''}
                        {d.reason ? ` (${d.reason})` : ''}
                      </td>
                      <td>
                        {d.attempts} / {failuresOf(d)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          <p class="note">Metrics summaries will join here once the observability issue has landed.</p>
        </article>
      )}
    </section>
  );
}
