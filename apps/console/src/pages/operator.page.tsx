import { useState } from 'preact/hooks';
import type { AccountSummary, KeySummary, ToolLevel, Wallet } from '@drael/contracts';
import { getJson, sendJson } from '../api/api-client.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { usd, when } from '../ui/format.js';
import { useLoad } from '../ui/use-load.js';

const LEVELS: ToolLevel[] = ['none', 'l1_http', 'l3_shell', 'l4_browser'];
const acctPath = (id: string) => `/admin/accounts/${encodeURIComponent(id)}`;

/** A key's state as the gateway treats it: revoked, expired, or active (until its expiry, if it has one). */
function keyStatus(k: KeySummary): string {
  if (k.revoked_at) return `revoked ${when(k.revoked_at)}`;
  if (k.expires_at === null) return 'active';
  return Date.parse(k.expires_at) <= Date.now() ? `expired ${when(k.expires_at)}` : `active, expires ${when(k.expires_at)}`;
}

/** The operator's view (admin token): accounts, their keys and wallets. */
export function OperatorPage() {
  const accounts = useLoad(() => getJson<{ accounts: AccountSummary[]; has_more: boolean }>('/admin/accounts?limit=100'));
  const [selected, setSelected] = useState<string>();
  return (
    <section aria-labelledby="op-title">
      <h1 id="op-title">Accounts and keys</h1>
      <ErrorBanner error={accounts.error} />
      <div class="grid">
        <article class="card" aria-labelledby="acc-h">
          <h2 id="acc-h">Accounts</h2>
          <table data-testid="accounts">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Plan</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Open</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {accounts.data?.accounts.map((a) => (
                <tr key={a.account_id} class={a.account_id === selected ? 'selected' : undefined}>
                  <td>{a.name}</td>
                  <td>{a.plan}</td>
                  <td>{when(a.created_at)}</td>
                  <td>
                    <button type="button" onClick={() => setSelected(a.account_id)} aria-label={`Open account ${a.name} (${a.account_id})`} data-account={a.account_id}>
                      Open
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {accounts.data?.has_more && <p class="note">Showing the newest 100.</p>}
        </article>
        <CreateAccount onCreated={(id) => (accounts.reload(), setSelected(id))} />
      </div>
      {selected && <AccountDetail key={selected} accountId={selected} />}
    </section>
  );
}

function CreateAccount({ onCreated }: { onCreated: (id: string) => void }) {
  const [name, setName] = useState('');
  const [plan, setPlan] = useState('free');
  const [error, setError] = useState<unknown>();
  const plans = useLoad(() => getJson<{ data: { id: string; name: string }[] }>('/api/billing/plans'));
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const a = await sendJson<{ account_id: string }>('POST', '/admin/accounts', { name, plan });
      setName('');
      onCreated(a.account_id);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="card" onSubmit={(e) => void submit(e)} aria-labelledby="new-acc-h">
      <h2 id="new-acc-h">Create an account</h2>
      <label for="acc-name">Name</label>
      <input id="acc-name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      <label for="acc-plan">Plan</label>
      <select id="acc-plan" value={plan} onChange={(e) => setPlan((e.target as HTMLSelectElement).value)}>
        {(plans.data?.data ?? [{ id: 'free', name: 'Free' }]).map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
      <button type="submit">Create</button>
      <ErrorBanner error={error} />
    </form>
  );
}

function AccountDetail({ accountId }: { accountId: string }) {
  const keys = useLoad(() => getJson<{ keys: KeySummary[] }>(`${acctPath(accountId)}/keys`), [accountId]);
  const wallet = useLoad(() => getJson<Wallet>(`${acctPath(accountId)}/wallet`), [accountId]);
  const [error, setError] = useState<unknown>();
  const [newKey, setNewKey] = useState<string>();
  const [level, setLevel] = useState<ToolLevel>('l3_shell');
  const [keyName, setKeyName] = useState('');
  const [perMinute, setPerMinute] = useState('');
  const [perHour, setPerHour] = useState('');
  // A day (YYYY-MM-DD): the key stops working at its start, UTC. Empty: never.
  const [expiresOn, setExpiresOn] = useState('');
  const [amount, setAmount] = useState('');
  const [creditKey, setCreditKey] = useState(() => crypto.randomUUID());

  const act = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError(err);
    }
  };
  const createKey = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const limits = perMinute && perHour ? { rate_limit: { per_minute: Number(perMinute), per_hour: Number(perHour) } } : {};
      const expiry = expiresOn ? { expires_at: `${expiresOn}T00:00:00Z` } : {};
      const k = await sendJson<{ api_key: string }>('POST', `${acctPath(accountId)}/keys`, { tool_level: level, ...(keyName ? { name: keyName } : {}), ...limits, ...expiry });
      setNewKey(k.api_key);
      keys.reload();
    });
  };
  const revoke = (k: KeySummary) =>
    act(async () => {
      await sendJson('DELETE', `${acctPath(accountId)}/keys/${encodeURIComponent(k.key_id)}`);
      keys.reload();
    });
  const credit = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const micros = Math.round(Number(amount) * 1_000_000);
      // The idempotency key stays until the credit succeeds, so a retried click credits once.
      await sendJson('POST', `${acctPath(accountId)}/wallet/credit`, { amount_micros: micros }, { 'idempotency-key': creditKey });
      setAmount('');
      setCreditKey(crypto.randomUUID());
      wallet.reload();
    });
  };

  return (
    <article class="card" aria-labelledby="detail-h" data-testid="account-detail">
      <h2 id="detail-h">Account {accountId}</h2>
      <ErrorBanner error={error ?? keys.error ?? wallet.error} />
      <h3>Keys</h3>
      <table data-testid="keys">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Name</th>
            <th scope="col">Tool level</th>
            <th scope="col">Limits</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.data?.keys.map((k) => (
            <tr key={k.key_id} data-key-id={k.key_id}>
              <td>
                <code>{k.hint}</code>
              </td>
              <td>{k.name ?? '—'}</td>
              <td>{k.tool_level}</td>
              <td>
                {k.rate_limit.per_minute}/min, {k.rate_limit.per_hour}/h
              </td>
              <td>{keyStatus(k)}</td>
              <td>
                {!k.revoked_at && (
                  <button type="button" class="danger" onClick={() => void revoke(k)} aria-label={`Revoke key ${k.hint}`}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form onSubmit={createKey} class="row">
        <label for="k-name">Key name</label>
        <input id="k-name" value={keyName} onInput={(e) => setKeyName((e.target as HTMLInputElement).value)} />
        <label for="k-level">Tool level</label>
        <select id="k-level" value={level} onChange={(e) => setLevel((e.target as HTMLSelectElement).value as ToolLevel)}>
          {LEVELS.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
        <label for="k-min">Per minute</label>
        <input id="k-min" type="number" min={1} value={perMinute} onInput={(e) => setPerMinute((e.target as HTMLInputElement).value)} />
        <label for="k-hour">Per hour</label>
        <input id="k-hour" type="number" min={1} value={perHour} onInput={(e) => setPerHour((e.target as HTMLInputElement).value)} />
        <label for="k-expires">Expires on (UTC)</label>
        <input id="k-expires" type="date" value={expiresOn} onInput={(e) => setExpiresOn((e.target as HTMLInputElement).value)} />
        <button type="submit">Create key</button>
      </form>
      {newKey && (
        <div class="new-key" role="status">
          <p>The new key, shown this once (copy it now; it is not kept here):</p>
          <code data-testid="new-key">{newKey}</code>{' '}
          <button type="button" class="quiet" onClick={() => setNewKey(undefined)}>
            Hide
          </button>
        </div>
      )}
      <h3>Wallet</h3>
      {wallet.data && (
        <dl class="facts" data-testid="wallet">
          <dt>Balance</dt>
          <dd data-testid="wallet-balance">{usd(wallet.data.balance_micros / 1e6)}</dd>
          <dt>Held</dt>
          <dd>{usd(wallet.data.held_micros / 1e6)}</dd>
          <dt>Monthly budget</dt>
          <dd>{wallet.data.monthly_budget_micros === null ? 'none' : usd(wallet.data.monthly_budget_micros / 1e6)}</dd>
          <dt>Spent this month</dt>
          <dd>{usd(wallet.data.spent_this_month_micros / 1e6)}</dd>
        </dl>
      )}
      <form onSubmit={credit} class="row">
        <label for="credit">Credit (USD)</label>
        <input id="credit" type="number" min={0.000001} step="any" required value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
        <button type="submit">Credit wallet</button>
        <span class="note">idempotency key {creditKey.slice(0, 8)}…</span>
      </form>
    </article>
  );
}
