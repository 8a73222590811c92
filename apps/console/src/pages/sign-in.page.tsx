import { useState } from 'preact/hooks';
import { getJson } from '../api/api-client.js';
import { forgetCredential, saveCredential, type Credential } from '../api/credential.js';
import { ErrorBanner } from '../ui/error-banner.js';

/**
 * Sign in with an API key (the account's pages) or the admin token (the operator's). The secret is
 * checked against the gateway before it is kept, and kept in this tab's sessionStorage only.
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (c: Credential) => void }) {
  const [kind, setKind] = useState<Credential['kind']>('key');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const cred = { kind, secret: secret.trim() };
    saveCredential(cred);
    try {
      await getJson(kind === 'key' ? '/api/billing/usage' : '/admin/accounts?limit=1');
      setSecret('');
      onSignedIn(cred);
    } catch (err) {
      forgetCredential();
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>Drael console</h1>
      <form onSubmit={(e) => void submit(e)} aria-describedby="sign-in-note">
        <fieldset>
          <legend>Sign in with</legend>
          <label>
            <input type="radio" name="kind" value="key" checked={kind === 'key'} onChange={() => setKind('key')} /> An API key (your account)
          </label>
          <label>
            <input type="radio" name="kind" value="admin" checked={kind === 'admin'} onChange={() => setKind('admin')} /> The admin token (operator)
          </label>
        </fieldset>
        <label for="secret">{kind === 'key' ? 'API key' : 'Admin token'}</label>
        <input
          id="secret"
          name="secret"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={secret}
          placeholder={kind === 'key' ? 'drael_…' : ''}
          onInput={(e) => setSecret((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || secret.trim() === ''}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        <p id="sign-in-note" class="note">
          Kept in this tab only (sessionStorage): closing the tab signs you out. The console talks to this gateway alone.
        </p>
        <ErrorBanner error={error} />
      </form>
    </main>
  );
}
