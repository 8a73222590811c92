/**
 * A whole chat completion as the stream a client asked for: for an upstream that ignores
 * `stream: true` and answers one JSON object (the catalogue loop reads such an answer as a turn;
 * the proxy, which relays streams unparsed, converts it here, once, at its end). Per choice, one
 * chunk with the message (role, content, refusal, tool calls with their index), one with its
 * finish reason; the usage chunk when the client asked for it; then `[DONE]`. Undefined for a
 * body that is no chat completion (an error object, `{"detail":…}`): the caller answers 502.
 */
export function completionAsStream(text: string, includeUsage: boolean, now = Date.now()): string | undefined {
  let completion: unknown;
  try {
    completion = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(completion) || !Array.isArray(completion.choices) || completion.choices.length === 0 || 'error' in completion) return undefined;
  const head = {
    id: typeof completion.id === 'string' ? completion.id : 'chatcmpl-drael',
    object: 'chat.completion.chunk',
    created: typeof completion.created === 'number' ? completion.created : Math.floor(now / 1000),
    model: typeof completion.model === 'string' ? completion.model : '',
    ...(typeof completion.system_fingerprint === 'string' ? { system_fingerprint: completion.system_fingerprint } : {}),
  };
  const usage = includeUsage ? { usage: null } : {};
  let out = '';
  for (const [position, choice] of completion.choices.entries()) {
    if (!isObject(choice) || !isObject(choice.message)) return undefined;
    const index = typeof choice.index === 'number' ? choice.index : position;
    const message = choice.message;
    const delta: Record<string, unknown> = { role: typeof message.role === 'string' ? message.role : 'assistant', content: message.content ?? null };
    if (typeof message.refusal === 'string') delta.refusal = message.refusal;
    if (Array.isArray(message.tool_calls)) delta.tool_calls = message.tool_calls.map((call: unknown, i: number) => (isObject(call) ? { index: i, ...call } : call));
    out += event({ ...head, choices: [{ index, delta, logprobs: null, finish_reason: null }], ...usage });
    const finish = typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop';
    out += event({ ...head, choices: [{ index, delta: {}, logprobs: null, finish_reason: finish }], ...usage });
  }
  if (includeUsage) out += event({ ...head, choices: [], usage: isObject(completion.usage) ? completion.usage : null });
  return `${out}data: [DONE]\n\n`;
}

const event = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
