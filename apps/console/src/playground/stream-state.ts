/** What one streamed catalogue-mode answer showed: text, tool cards, sub-agent cards, turns, usage. */

export interface ToolCard {
  id: string;
  tool: string;
  arguments: string;
  turn: number;
  status: 'running' | 'done';
  ok?: boolean;
  durationMs?: number;
  result?: string;
}

export interface SubAgentCard {
  id: string;
  role: string;
  task: string;
  status: 'running' | 'done';
  ok?: boolean;
  preview?: string;
  turns: number;
  tools: ToolCard[];
}

export type Card = ({ kind: 'tool' } & ToolCard) | ({ kind: 'subagent' } & SubAgentCard);

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface StreamState {
  text: string;
  cards: Card[];
  turns: number;
  usage?: Usage;
  finishReason?: string;
  error?: { message: string; code?: string | null; type?: string | null };
  done: boolean;
}

export const emptyStream = (): StreamState => ({ text: '', cards: [], turns: 0, done: false });

// The frames the gateway sends in `delta.drael` (apps/gateway/src/turn-loop/chat-stream.writer.ts).
type Frame =
  | { event: 'subagent_started'; id: string; role: string; task: string }
  | { event: 'subagent_done'; id: string; role: string; ok: boolean; preview: string }
  | { event: 'turn_started'; turn: number; agent?: string }
  | { event: 'tool_started'; id: string; tool: string; arguments: string; turn: number; agent?: string }
  | { event: 'tool_done'; id: string; tool: string; ok: boolean; duration_ms: number; result: string; agent?: string };

/** One SSE data payload applied to the state (a new object; cards are replaced, never mutated). */
export function applyChunk(s: StreamState, data: string): StreamState {
  if (data === '[DONE]') return { ...s, done: true };
  let chunk: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- a chunk of the OpenAI stream, read defensively
  try {
    chunk = JSON.parse(data);
  } catch {
    return s;
  }
  if (chunk?.error)
    return { ...s, error: { message: String(chunk.error.message ?? 'The stream failed'), code: chunk.error.code ?? null, type: chunk.error.type ?? null }, done: true };
  let next = s;
  if (chunk?.usage) next = { ...next, usage: chunk.usage as Usage };
  const choice = chunk?.choices?.[0];
  if (!choice) return next;
  const delta = choice.delta ?? {};
  if (typeof delta.content === 'string' && delta.content) next = { ...next, text: next.text + delta.content };
  if (delta.drael) next = applyFrame(next, delta.drael as Frame);
  if (choice.finish_reason) next = { ...next, finishReason: String(choice.finish_reason) };
  return next;
}

function applyFrame(s: StreamState, f: Frame): StreamState {
  switch (f.event) {
    case 'turn_started':
      if (!f.agent) return { ...s, turns: Math.max(s.turns, f.turn) };
      return withSub(s, f.agent, (a) => ({ ...a, turns: Math.max(a.turns, f.turn) }));
    case 'tool_started': {
      const card: ToolCard = { id: f.id, tool: f.tool, arguments: f.arguments, turn: f.turn, status: 'running' };
      if (f.agent) return withSub(s, f.agent, (a) => ({ ...a, tools: [...a.tools, card] }));
      return { ...s, cards: [...s.cards, { kind: 'tool', ...card }] };
    }
    case 'tool_done': {
      const finish = (c: ToolCard): ToolCard => (c.id === f.id && c.status === 'running' ? { ...c, status: 'done', ok: f.ok, durationMs: f.duration_ms, result: f.result } : c);
      if (f.agent) return withSub(s, f.agent, (a) => ({ ...a, tools: a.tools.map(finish) }));
      return { ...s, cards: s.cards.map((c) => (c.kind === 'tool' ? { ...finish(c), kind: 'tool' } : c)) };
    }
    case 'subagent_started':
      return { ...s, cards: [...s.cards, { kind: 'subagent', id: f.id, role: f.role, task: f.task, status: 'running', turns: 0, tools: [] }] };
    case 'subagent_done':
      return withSub(s, f.id, (a) => ({ ...a, status: 'done', ok: f.ok, preview: f.preview }));
    default:
      return s;
  }
}

function withSub(s: StreamState, id: string, change: (a: SubAgentCard) => SubAgentCard): StreamState {
  return { ...s, cards: s.cards.map((c) => (c.kind === 'subagent' && c.id === id ? { ...change(c), kind: 'subagent' } : c)) };
}
