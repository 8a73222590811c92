import { useState } from 'preact/hooks';
import type { Agent, Run } from '@drael/contracts';
import { getJson, sendJson } from '../api/api-client.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { usd, when } from '../ui/format.js';
import { useLoad } from '../ui/use-load.js';

type AgentForm = { name: string; model: string; instructions: string; sandbox: boolean; step_limit: number; budget_usd: number };

const formOf = (a?: Agent): AgentForm => ({
  name: a?.name ?? 'my-agent',
  model: a?.model ?? '',
  instructions: a?.instructions ?? '',
  sandbox: a ? a.tools.includes('sandbox.execute') : true,
  step_limit: a?.limits.step_limit ?? 20,
  budget_usd: a?.limits.budget_usd ?? 1,
});

/** Hosted agents: the list, one agent to create or edit, its runs, and a new run. */
export function AgentsPage({ agentId }: { agentId?: string }) {
  const agents = useLoad(() => getJson<{ data: Agent[] }>('/v1/agents?limit=100'));
  const agent = agents.data?.data.find((a) => a.id === agentId);
  return (
    <section aria-labelledby="agents-title">
      <h1 id="agents-title">Agents and runs</h1>
      <ErrorBanner error={agents.error} />
      <div class="grid">
        <article class="card" aria-labelledby="list-h">
          <h2 id="list-h">Your agents</h2>
          {agents.data?.data.length === 0 && <p>No agents yet: create one.</p>}
          <ul class="plain" data-testid="agent-list">
            {agents.data?.data.map((a) => (
              <li key={a.id}>
                <a href={`#/agents/${encodeURIComponent(a.id)}`} aria-current={a.id === agentId ? 'true' : undefined}>
                  {a.name}
                </a>{' '}
                <span class="note">
                  {a.model} · {a.limits.step_limit} steps · {usd(a.limits.budget_usd)}
                </span>
              </li>
            ))}
          </ul>
          <a href="#/agents" class="button-link">
            New agent
          </a>
        </article>
        <AgentEditor key={agent?.id ?? 'new'} agent={agent} onSaved={(a) => (agents.reload(), (location.hash = `#/agents/${encodeURIComponent(a.id)}`))} />
      </div>
      {agent && <AgentRuns agent={agent} />}
    </section>
  );
}

function AgentEditor({ agent, onSaved }: { agent?: Agent; onSaved: (a: Agent) => void }) {
  const models = useLoad(() => getJson<{ data: { id: string }[] }>('/v1/models'));
  const [f, setF] = useState<AgentForm>(() => formOf(agent));
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const model = f.model || models.data?.data[0]?.id || '';
  const set = <K extends keyof AgentForm>(k: K, v: AgentForm[K]) => (setF({ ...f, [k]: v }), setSaved(false));

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const body = { name: f.name, model, instructions: f.instructions, tools: f.sandbox ? ['sandbox.execute'] : [], limits: { step_limit: f.step_limit, budget_usd: f.budget_usd } };
    try {
      const a = agent ? await sendJson<Agent>('PATCH', `/v1/agents/${encodeURIComponent(agent.id)}`, body) : await sendJson<Agent>('POST', '/v1/agents', body);
      setSaved(true);
      onSaved(a);
    } catch (err) {
      setError(err);
    }
  };
  const num = (e: Event) => Number((e.target as HTMLInputElement).value);

  return (
    <form class="card" onSubmit={(e) => void submit(e)} aria-labelledby="edit-h">
      <h2 id="edit-h">{agent ? `Edit ${agent.name}` : 'Create an agent'}</h2>
      <label for="a-name">Name</label>
      <input id="a-name" required value={f.name} onInput={(e) => set('name', (e.target as HTMLInputElement).value)} />
      <label for="a-model">Model alias</label>
      <select id="a-model" value={model} onChange={(e) => set('model', (e.target as HTMLSelectElement).value)}>
        {models.data?.data.map((m) => (
          <option key={m.id} value={m.id}>
            {m.id}
          </option>
        ))}
      </select>
      <label for="a-instr">Instructions</label>
      <textarea id="a-instr" rows={3} value={f.instructions} onInput={(e) => set('instructions', (e.target as HTMLTextAreaElement).value)} />
      <label class="check">
        <input type="checkbox" checked={f.sandbox} onChange={(e) => set('sandbox', (e.target as HTMLInputElement).checked)} /> May run code (sandbox.execute)
      </label>
      <div class="row">
        <label for="a-steps">Step limit</label>
        <input id="a-steps" type="number" min={1} max={200} value={f.step_limit} onInput={(e) => set('step_limit', num(e))} />
        <label for="a-budget">Budget per run (USD)</label>
        <input id="a-budget" type="number" min={0.000001} step="any" value={f.budget_usd} onInput={(e) => set('budget_usd', num(e))} />
      </div>
      <button type="submit">{agent ? 'Save' : 'Create'}</button>
      {saved && <span role="status"> Saved.</span>}
      <ErrorBanner error={error} />
    </form>
  );
}

function AgentRuns({ agent }: { agent: Agent }) {
  const runs = useLoad(() => getJson<{ data: Run[] }>(`/v1/runs?limit=20&agent_id=${encodeURIComponent(agent.id)}`), [agent.id]);
  const [task, setTask] = useState('');
  const [error, setError] = useState<unknown>();
  const start = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const run = await sendJson<Run>('POST', `/v1/agents/${encodeURIComponent(agent.id)}/runs`, { task }, { 'idempotency-key': crypto.randomUUID() });
      location.hash = `#/runs/${encodeURIComponent(run.id)}`;
    } catch (err) {
      setError(err);
    }
  };
  return (
    <article class="card" aria-labelledby="runs-h">
      <h2 id="runs-h">Runs of {agent.name}</h2>
      <form onSubmit={(e) => void start(e)}>
        <label for="task">Task</label>
        <textarea id="task" rows={2} required value={task} onInput={(e) => setTask((e.target as HTMLTextAreaElement).value)} />
        <button type="submit" disabled={!task.trim()}>
          Start a run
        </button>
      </form>
      <ErrorBanner error={error ?? runs.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Steps</th>
            <th scope="col">Spent</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {runs.data?.data.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={`#/runs/${encodeURIComponent(r.id)}`}>{r.id}</a>
              </td>
              <td>{r.status}</td>
              <td>{r.step_count}</td>
              <td>{usd(r.spent_usd)}</td>
              <td>{when(r.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}
