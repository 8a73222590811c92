/**
 * The key Drael's own stream frames ride under in a chat chunk's delta (`delta.drael`: sub-agent and
 * tool events), which OpenAI clients ignore. Some keep it all the same: the openai SDK's stream
 * helper copies every delta key it does not know onto the message it assembles, and an app that
 * appends that message to its history sends the key back with the next request.
 */
export const VENDOR_FRAME_KEY = 'drael';

/**
 * The messages as the upstream should see them: Drael's frame key taken off any message that came
 * back with it (a strict OpenAI-compatible upstream refuses unknown message keys). The same array
 * when no message has it, the common case, so nothing is copied or re-encoded then.
 */
export function withoutVendorFrames<M>(messages: readonly M[]): readonly M[] {
  let out: M[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Record<string, unknown>;
    if (typeof m !== 'object' || m === null || !Object.hasOwn(m, VENDOR_FRAME_KEY)) continue;
    out ??= messages.slice();
    const { [VENDOR_FRAME_KEY]: _frame, ...rest } = m;
    out[i] = rest as M;
  }
  return out ?? messages;
}
