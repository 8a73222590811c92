import type { SubAgentCard, ToolCard } from './stream-state.js';

/** Pretty-prints JSON text when it is JSON; anything else as it came. */
const pretty = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};

export function ToolCardView({ card }: { card: ToolCard }) {
  const state = card.status === 'running' ? 'running' : card.ok ? 'ok' : 'failed';
  return (
    <article class={`tool-card ${state}`} data-testid="tool-card" data-tool={card.tool} aria-label={`Tool call ${card.tool}, ${state}`}>
      <header>
        <strong>{card.tool}</strong>
        <span class="badge">{state}</span>
        <span class="note">
          turn {card.turn}
          {card.durationMs !== undefined ? ` · ${card.durationMs} ms` : ''}
        </span>
      </header>
      <details open={card.status === 'running'}>
        <summary>Arguments</summary>
        <pre>{pretty(card.arguments)}</pre>
      </details>
      {card.result !== undefined && (
        <details open>
          <summary>Result, as the model saw it</summary>
          <pre data-testid="tool-result">{pretty(card.result)}</pre>
        </details>
      )}
    </article>
  );
}

export function SubAgentCardView({ card }: { card: SubAgentCard }) {
  const state = card.status === 'running' ? 'running' : card.ok ? 'ok' : 'failed';
  return (
    <article class={`tool-card subagent ${state}`} data-testid="subagent-card" aria-label={`Sub-agent ${card.role}, ${state}`}>
      <header>
        <strong>Sub-agent · {card.role}</strong>
        <span class="badge">{state}</span>
        <span class="note">{card.turns} turn(s)</span>
      </header>
      <p>
        <span class="label">Task:</span> {card.task}
      </p>
      {card.tools.map((t) => (
        <ToolCardView key={t.id} card={t} />
      ))}
      {card.preview !== undefined && (
        <p data-testid="subagent-preview">
          <span class="label">Answer:</span> {card.preview}
        </p>
      )}
    </article>
  );
}
