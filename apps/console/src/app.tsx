import { useEffect, useState } from 'preact/hooks';
import { forgetCredential, loadCredential, type Credential } from './api/credential.js';
import { SignInPage } from './pages/sign-in.page.js';
import { UsagePage } from './pages/usage.page.js';
import { PlaygroundPage } from './pages/playground.page.js';
import { AgentsPage } from './pages/agents.page.js';
import { RunPage } from './pages/run.page.js';
import { OperatorPage } from './pages/operator.page.js';
import { HealthPage } from './pages/health.page.js';

/** The page is the hash (#/usage): nothing secret is ever in it, and the gateway serves one file. */
function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

const KEY_PAGES = [
  ['usage', 'Usage'],
  ['playground', 'Playground'],
  ['agents', 'Agents and runs'],
] as const;
const ADMIN_PAGES = [
  ['operator', 'Accounts and keys'],
  ['health', 'Service health'],
] as const;

export function App() {
  const [cred, setCred] = useState<Credential | undefined>(loadCredential);
  const route = useRoute();
  if (!cred) return <SignInPage onSignedIn={(c) => setCred(c)} />;

  const pages = cred.kind === 'admin' ? ADMIN_PAGES : KEY_PAGES;
  const page = route[0] && (pages.some(([p]) => p === route[0]) || (cred.kind === 'key' && route[0] === 'runs')) ? route[0] : pages[0][0];
  const signOut = () => {
    forgetCredential();
    setCred(undefined);
    location.hash = '';
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Drael console</span>
        <nav aria-label="Pages">
          <ul>
            {pages.map(([p, label]) => (
              <li key={p}>
                <a href={`#/${p}`} aria-current={page === p || (p === 'agents' && page === 'runs') ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">{cred.kind === 'admin' ? 'Operator (admin token)' : 'API key'}</span>
        <button type="button" class="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {page === 'usage' && <UsagePage />}
        {page === 'playground' && <PlaygroundPage />}
        {page === 'agents' && <AgentsPage agentId={route[1]} />}
        {page === 'runs' && route[1] && <RunPage runId={route[1]} />}
        {page === 'operator' && <OperatorPage />}
        {page === 'health' && <HealthPage />}
      </main>
    </>
  );
}
