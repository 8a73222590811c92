import { describe, expect, it } from 'vitest';
import { turnBodyFor } from './model-turn.engine.js';

// issue 20: a turn's upstream body is serialised once per turn, the catalogue's tools go in as
// their one serialised copy, and each deployment gets its own model name.
const messages = [{ role: 'user', content: 'héllo "there"\n' }];
const tools = [{ type: 'function', function: { name: 'web_search', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }];

describe('a turn’s upstream body', () => {
  it('is the same JSON as the options, messages, stream fields and model serialised together', () => {
    const request = { messages, options: { temperature: 0.2, max_tokens: 64, tools } };
    for (const stream of [false, true]) {
      const body = JSON.parse(turnBodyFor(request, stream)('up-model'));
      expect(body).toEqual({
        temperature: 0.2,
        max_tokens: 64,
        tools,
        messages,
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        model: 'up-model',
      });
    }
  });

  it('takes pre-serialised tools in place of options.tools, as they are', () => {
    const toolsJson = JSON.stringify(tools);
    const text = turnBodyFor({ messages, options: { tools: [{ type: 'function', function: { name: 'stale' } }] }, toolsJson }, false)('m');
    expect(text).toContain(`"tools":${toolsJson}`);
    expect(JSON.parse(text)).toEqual({ model: 'm', tools, messages, stream: false });
  });

  it('names the deployment’s model once, whatever the options hold', () => {
    const bodyFor = turnBodyFor({ messages, options: { model: 'client-alias' } }, false);
    for (const model of ['a', 'b "quoted"']) {
      const text = bodyFor(model);
      expect(text.match(/"model":/g)).toHaveLength(1);
      expect(JSON.parse(text).model).toBe(model);
    }
  });

  it('carries the output limit under the name each deployment takes (max_tokens_param), the rest unchanged', () => {
    const bodyFor = turnBodyFor({ messages, options: { temperature: 0, max_tokens: 64 } }, false);
    const as = (param?: 'max_tokens' | 'max_completion_tokens') => JSON.parse(bodyFor('m', param ? ({ max_tokens_param: param } as never) : undefined));
    expect(as('max_completion_tokens')).toEqual({ model: 'm', temperature: 0, max_completion_tokens: 64, messages, stream: false });
    expect(as('max_tokens')).toEqual({ model: 'm', temperature: 0, max_tokens: 64, messages, stream: false });
    expect(as()).toEqual(as('max_tokens'));
    // The copy for the other name is made once, then re-used (a retry on a second such deployment).
    expect(bodyFor('m', { max_tokens_param: 'max_completion_tokens' } as never)).toBe(bodyFor('m', { max_tokens_param: 'max_completion_tokens' } as never));
  });
});
