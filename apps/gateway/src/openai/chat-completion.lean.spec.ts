import { describe, expect, it } from 'vitest';
import { ChatCompletionRequestSchema } from './chat-completion.schema.js';
import { isCertainlyValidChatRequest } from './chat-completion.lean.js';

const VALID: Record<string, unknown>[] = [
  { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  {
    model: 'bench',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ],
    stream: false,
    max_tokens: 64,
    temperature: 0,
  },
  { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true }, n: 1, top_p: 1 },
  {
    model: 'm',
    messages: [
      { role: 'developer', content: [{ type: 'text', text: 'x' }] },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:' } }] },
    ],
  },
  {
    model: 'm',
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    ],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }, { type: 'web_search' }],
    max_completion_tokens: 10,
    temperature: null,
    vendor_extension: { anything: true },
  },
];

const ODD_VALUES: unknown[] = [undefined, null, '', 'x', 0, -1, 0.5, 1, 1.5, 2, 2.5, 128, 129, 2 ** 60, true, false, [], [1], {}, { type: '' }, { type: 'text' }];
const FIELDS = ['model', 'messages', 'stream', 'stream_options', 'tools', 'n', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens'];
const MESSAGE_FIELDS = ['role', 'content', 'tool_calls', 'tool_call_id'];

/** Every body the lean check accepts, the zod schema must accept too; the common valid ones it must accept itself. */
function expectAgreement(body: unknown): void {
  if (isCertainlyValidChatRequest(body)) expect(ChatCompletionRequestSchema.safeParse(body).success, JSON.stringify(body)).toBe(true);
}

describe('the lean chat request check', () => {
  it('accepts the common valid bodies (so proxy mode skips zod for them)', () => {
    for (const body of VALID) {
      expect(ChatCompletionRequestSchema.safeParse(body).success).toBe(true);
      expect(isCertainlyValidChatRequest(body), JSON.stringify(body)).toBe(true);
    }
  });

  it('never accepts what the zod schema rejects: every top-level field set to odd values', () => {
    let rejected = 0;
    for (const base of VALID) {
      for (const field of FIELDS) {
        for (const value of ODD_VALUES) {
          const body = { ...base, [field]: value };
          expectAgreement(body);
          if (!isCertainlyValidChatRequest(body)) rejected++;
        }
      }
    }
    expect(rejected).toBeGreaterThan(100);
  });

  it('never accepts what the zod schema rejects: every message, tool call and content part field set to odd values', () => {
    for (const base of VALID) {
      const messages = base.messages as Record<string, unknown>[];
      messages.forEach((message, i) => {
        for (const field of MESSAGE_FIELDS) {
          for (const value of [...ODD_VALUES, 'user', 'assistant', 'tool', 'nobody', [{ type: 'text' }], [{ id: 'c', type: 'function', function: { name: 'f' } }]]) {
            const changed = messages.slice();
            changed[i] = { ...message, [field]: value };
            expectAgreement({ ...base, messages: changed });
          }
        }
        for (const value of ODD_VALUES) {
          const changed = messages.slice();
          changed[i] = { ...message, content: [value] };
          expectAgreement({ ...base, messages: changed });
          changed[i] = { ...message, tool_calls: [{ id: 'c', type: 'function', function: value }] };
          expectAgreement({ ...base, messages: changed });
          changed[i] = { ...message, tool_calls: [{ id: value, type: 'function', function: { name: 'f', arguments: '{}' } }] };
          expectAgreement({ ...base, messages: changed });
        }
      });
      for (const value of ODD_VALUES) {
        expectAgreement({ ...base, tools: [value] });
        expectAgreement({ ...base, tools: [{ type: 'function', function: value }] });
        expectAgreement({ ...base, stream_options: { include_usage: value } });
      }
    }
  });

  it('what it accepts, zod gives back unchanged (so both modes may use the body as it came, issue 20)', () => {
    let compared = 0;
    const check = (body: unknown) => {
      if (!isCertainlyValidChatRequest(body)) return;
      expect(ChatCompletionRequestSchema.parse(body), JSON.stringify(body)).toStrictEqual(body);
      compared++;
    };
    for (const base of VALID) {
      check(base);
      for (const field of FIELDS) for (const value of ODD_VALUES) check({ ...base, [field]: value });
    }
    expect(compared).toBeGreaterThan(50);
  });

  it('rejects non-object bodies, which zod answers with its own error', () => {
    for (const body of [null, undefined, 'x', 1, [], [VALID[0]]]) {
      expect(isCertainlyValidChatRequest(body)).toBe(false);
      expect(ChatCompletionRequestSchema.safeParse(body).success).toBe(false);
    }
  });
});
