import type { InferenceMessage } from '@drael/contracts';

/** A tool call the model asked for, as its reply carries it. */
export type ModelToolCall = NonNullable<InferenceMessage['tool_calls']>[number];

/** A written step as a resumed run reads it: its kind and the message it added (null: written before messages were kept). */
export interface WrittenStep {
  readonly kind: string;
  readonly message: InferenceMessage | null;
}

/** Where a run stands after its written steps. */
export type ConversationSoFar =
  /** The conversation to go on with, and the calls of the model's last reply still to run (in order). */
  | { readonly messages: InferenceMessage[]; readonly pendingCalls: ModelToolCall[] }
  /** The model had already answered (its worker stopped before it could end the run). */
  | { readonly answer: string }
  /** A step lacks its message: the run cannot be rebuilt. */
  | { readonly notResumable: string };

export const MODEL_CALL_KIND = 'inference.chat';

/**
 * Rebuilds a run's conversation from its opening (instructions and task) and its written steps,
 * in order: a model call's step holds the model's reply, each tool step its answer. The loop runs a
 * reply's tool calls one step each, in order, so the calls after the last reply not yet followed
 * by their steps are the ones still to run. One rule for the loop and its resumption: the loop
 * itself writes exactly these messages (run-executor.ts).
 */
export function conversationSoFar(opening: readonly InferenceMessage[], steps: readonly WrittenStep[]): ConversationSoFar {
  const messages = [...opening];
  let calls: ModelToolCall[] = [];
  let answered = 0;
  for (const [i, step] of steps.entries()) {
    if (!step.message) return { notResumable: `step ${i} was written without its message` };
    if (step.kind === MODEL_CALL_KIND) {
      const replyCalls = step.message.tool_calls ?? [];
      // A reply without tool calls is the answer: it can only be the last step.
      if (replyCalls.length === 0) return i === steps.length - 1 ? { answer: step.message.content ?? '' } : { notResumable: `step ${i} answered, yet steps follow it` };
      messages.push(step.message);
      calls = replyCalls;
      answered = 0;
    } else {
      if (answered >= calls.length) return { notResumable: `step ${i} answers no tool call` };
      messages.push(step.message);
      answered++;
    }
  }
  return { messages, pendingCalls: calls.slice(answered) };
}
