import { describe, expect, it } from 'vitest';
import { resolveItemReferences } from './item-references.js';
import { newItemId, responseIdOfItem } from './response-object.js';
import type { StoredResponse } from './response.store.js';
import type { InputItem } from './responses.schema.js';

const responseId = `resp_${'a'.repeat(32)}`;
const message = { id: newItemId({ id: responseId }, 'msg'), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi' }] };
const call = { id: newItemId({ id: responseId }, 'fc'), type: 'function_call', status: 'completed', call_id: 'c1', name: 'f', arguments: '{}' };
const stored = { response: { id: responseId, output: [message, call] } } as unknown as StoredResponse;
const MiB = 1024 * 1024;
// The gateway's default body limit (BODY_LIMIT_BYTES).
const BODY_LIMIT = 32 * MiB;

describe('item references', () => {
  it('an output item id names its response; any other id names none', () => {
    expect(responseIdOfItem(message.id)).toBe(responseId);
    for (const id of ['msg_nope', responseId, `msg_${'a'.repeat(32)}`, `msg_${'a'.repeat(32)}_1234567`, '']) expect(responseIdOfItem(id), id).toBeUndefined();
  });

  it('are read in place, in order, each response loaded once; a reference to no item is a 404 naming it', async () => {
    const loads: string[] = [];
    const load = (id: string) => (loads.push(id), Promise.resolve(id === responseId ? stored : undefined));
    const input = [
      { role: 'user', content: 'q' },
      { type: 'item_reference', id: message.id },
      { type: 'item_reference', id: call.id },
    ] as unknown as InputItem[];
    expect(await resolveItemReferences(input, load, BODY_LIMIT)).toEqual([input[0], message, call]);
    expect(loads).toEqual([responseId]);
    const missing = [{ type: 'item_reference', id: newItemId({ id: responseId }, 'msg') }] as unknown as InputItem[];
    await expect(resolveItemReferences(missing, load, BODY_LIMIT)).rejects.toMatchObject({ code: 'not_found', param: 'input[0].id' });
  });

  it('an input without references is returned as it is, nothing loaded', async () => {
    const input = [{ role: 'user', content: 'q' }] as unknown as InputItem[];
    const load = () => Promise.reject(new Error('loaded'));
    expect(await resolveItemReferences(input, load, BODY_LIMIT)).toBe(input);
    expect(await resolveItemReferences('text', load, BODY_LIMIT)).toBe('text');
  });

  it('read in together past the body limit is a 400 naming the reference that passed it, nothing expanded further', async () => {
    // The audit's attack: one stored 8 MiB answer named 32 times by a 2.5 KB body.
    const big = { ...message, content: [{ type: 'output_text', text: 'x'.repeat(8 * MiB), annotations: [] }] };
    const load = () => Promise.resolve({ response: { id: responseId, output: [big] } } as unknown as StoredResponse);
    const input = Array.from({ length: 32 }, () => ({ type: 'item_reference', id: big.id })) as unknown as InputItem[];
    expect(JSON.stringify(input).length).toBeLessThan(4096);
    // Three copies fit in 32 MiB; the fourth passes it.
    await expect(resolveItemReferences(input, load, BODY_LIMIT)).rejects.toMatchObject({ status: 400, code: 'invalid_request', param: 'input[3]' });
    expect(await resolveItemReferences(input.slice(0, 3), load, BODY_LIMIT)).toEqual([big, big, big]);
  });
});
