import type { Plan, Usage, UsageDay } from '@drael/contracts';
import { getJson } from '../api/api-client.js';
import { DayChart } from '../ui/day-chart.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { MeterBar } from '../ui/meter-bar.js';
import { usd, when } from '../ui/format.js';
import { useLoad } from '../ui/use-load.js';

const WEEK_MS = 7 * 86_400_000;
const MIB = 1024 * 1024;

/** What GET /v1/sessions says of the account besides its page (stored_* absent from an older sandbox). */
interface SessionHoldings {
  total: number;
  max_sessions: number;
  stored_bytes?: number;
  max_stored_bytes?: number | null;
}

/** The account's plan, weekly allowances with their reset, extra usage, the agent wallet, 30 days of use. */
export function UsagePage() {
  const usage = useLoad(() => getJson<Usage>('/api/billing/usage'));
  const daily = useLoad(() => getJson<{ data: UsageDay[] }>('/api/billing/usage/daily?days=30'));
  const plans = useLoad(() => getJson<{ data: Plan[] }>('/api/billing/plans'));
  // A key whose tool level reaches no session (none) is refused here: the card is then left out.
  const sessions = useLoad(() => getJson<SessionHoldings>('/v1/sessions?limit=1'));
  const held = sessions.data;
  const u = usage.data;
  const plan = plans.data?.data.find((p) => p.id === u?.plan);
  const reset = u ? new Date(Date.parse(u.week_start) + WEEK_MS).toISOString() : undefined;
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <ErrorBanner error={usage.error ?? daily.error} />
      {usage.loading && !u && <p aria-live="polite">Loading…</p>}
      {u && (
        <div class="grid">
          <article class="card" aria-labelledby="plan-h">
            <h2 id="plan-h">Plan</h2>
            <p class="big" data-testid="plan">
              {plan?.name ?? u.plan}
            </p>
            {plan && (
              <p>
                {usd(plan.price_usd_per_month)} a month · paid tools: {plan.tools.join(', ') || 'none'}
              </p>
            )}
            <p class="note">Account {u.account_id}</p>
          </article>
          <article class="card" aria-labelledby="allow-h">
            <h2 id="allow-h">Weekly allowances</h2>
            <MeterBar
              label="Images"
              used={u.allowances.images.used}
              held={u.allowances.images.held}
              total={u.allowances.images.allowance}
              detail={`${u.allowances.images.extra} extra this week`}
            />
            <MeterBar
              label="Lookups"
              used={u.allowances.lookups.used}
              held={u.allowances.lookups.held}
              total={u.allowances.lookups.allowance}
              detail={`${u.allowances.lookups.extra} extra this week`}
            />
            <p class="note" data-testid="reset">
              Resets {when(reset)} (Monday 00:00 UTC)
            </p>
          </article>
          <article class="card" aria-labelledby="extra-h">
            <h2 id="extra-h">Extra usage</h2>
            <p>{u.extra_usage.enabled ? 'On: past the allowance, calls go on up to the daily ceiling.' : 'Off: a call past the allowance is refused.'}</p>
            {u.extra_usage.enabled && <MeterBar label="Extra today" used={u.extra_usage.used_today} total={u.extra_usage.daily_ceiling} detail="daily ceiling, resets 00:00 UTC" />}
          </article>
          {held && (
            <article class="card" aria-labelledby="sessions-h">
              <h2 id="sessions-h">Sandbox sessions</h2>
              <MeterBar label="Sessions" used={held.total} total={held.max_sessions} detail="unused ones expire; delete one to free its place" />
              {held.stored_bytes !== undefined && typeof held.max_stored_bytes === 'number' && (
                <MeterBar
                  label="Saved files"
                  used={Math.ceil(held.stored_bytes / MIB)}
                  total={Math.floor(held.max_stored_bytes / MIB)}
                  detail="MiB, every session's and every request's own workspace"
                />
              )}
            </article>
          )}
          <article class="card" aria-labelledby="wallet-h">
            <h2 id="wallet-h">Agent wallet</h2>
            <dl class="facts">
              <dt>Balance</dt>
              <dd data-testid="balance">{usd(u.agent_spend.balance_usd)}</dd>
              <dt>Held</dt>
              <dd>{usd(u.agent_spend.held_usd)}</dd>
              <dt>Monthly budget</dt>
              <dd>{u.agent_spend.monthly_budget_usd === null ? 'none' : usd(u.agent_spend.monthly_budget_usd)}</dd>
              <dt>Spent this month</dt>
              <dd>{usd(u.agent_spend.spent_this_month_usd)}</dd>
              <dt>Step rate</dt>
              <dd>{u.agent_spend.steps_per_minute} a minute</dd>
            </dl>
            {u.agent_spend.monthly_budget_usd !== null && (
              <MeterBar
                label="Monthly budget"
                used={Math.round(u.agent_spend.spent_this_month_usd * 100)}
                total={Math.round(u.agent_spend.monthly_budget_usd * 100)}
                detail="in cents"
              />
            )}
          </article>
        </div>
      )}
      {daily.data && <DayChart days={daily.data.data} />}
    </section>
  );
}
