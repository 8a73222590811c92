import { ApiError } from '../errors/api-error.js';
import { responseIdOfItem, type OutputItem } from './response-object.js';
import type { StoredResponse } from './response.store.js';
import type { InputItem } from './responses.schema.js';

// An id is quoted in the refusal up to this length (it is the client's, of any length).
const QUOTED_ID_CHARS = 200;

/**
 * The input with each `item_reference` replaced by the item it names: an output item of a stored
 * response of the caller's account (newItemId says which response). The Vercel AI SDK, with store
 * on (its default), sends the model's earlier answers back this way. A reference that names no
 * such item (unknown, another account's, a response not stored or expired) is a 404 naming it,
 * before any model call, as OpenAI answers it: dropped, the model would lose that part of the
 * conversation unseen. Each response is loaded once, however many of its items are named.
 *
 * The items read in take at most `maxBytes` together (the gateway's body limit, BODY_LIMIT_BYTES:
 * no more than the client could have sent inline), summed as they are read and refused past it,
 * 400 naming the reference, before anything is translated or serialised. Unbounded, 32 references
 * to one stored 8 MiB item (a 2.5 KB body) held the event loop 7.6 s and took 537 MB (audit).
 */
export async function resolveItemReferences(
  input: string | readonly InputItem[] | undefined,
  load: (responseId: string) => Promise<StoredResponse | undefined>,
  maxBytes: number,
): Promise<string | readonly InputItem[] | undefined> {
  if (input === undefined || typeof input === 'string' || !input.some((item) => item.type === 'item_reference')) return input;
  const responses = new Map<string, Promise<StoredResponse | undefined>>();
  // Each item's size is measured once, however often it is named.
  const sizes = new Map<OutputItem, number>();
  let bytes = 0;
  const out: InputItem[] = [];
  for (const [i, item] of input.entries()) {
    if (item.type !== 'item_reference') {
      out.push(item);
      continue;
    }
    const id = typeof item.id === 'string' ? item.id : '';
    const responseId = responseIdOfItem(id);
    let found: OutputItem | undefined;
    if (responseId !== undefined) {
      let stored = responses.get(responseId);
      if (stored === undefined) responses.set(responseId, (stored = load(responseId)));
      found = (await stored)?.response.output.find((o) => o.id === id);
    }
    if (found === undefined) throw new ApiError('not_found', `No item with id '${id.slice(0, QUOTED_ID_CHARS)}' found`, `input[${i}].id`);
    let size = sizes.get(found);
    if (size === undefined) sizes.set(found, (size = Buffer.byteLength(JSON.stringify(found))));
    bytes += size;
    if (bytes > maxBytes) {
      throw new ApiError(
        'invalid_request',
        `The items input references take more than ${maxBytes} bytes together (the request body limit); send fewer references, or continue with previous_response_id`,
        `input[${i}]`,
      );
    }
    // An output item of Drael's own making is one of the input item types (message, function_call, a hosted call).
    out.push(found as unknown as InputItem);
  }
  return out;
}
