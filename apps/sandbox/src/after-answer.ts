import { AsyncLocalStorage } from 'node:async_hooks';

// The answer of the call the current code runs for (resolves once it has left).
const currentCall = new AsyncLocalStorage<Promise<void>>();

/**
 * Runs `call` as one answered call: work it starts and does not wait for (removing the run's
 * container, preparing the workspace's next one, refilling the pool) waits with `untilAnswered()`
 * until the answer has left (issue 20). On a 2-core machine a container create, start or remove
 * beside the answer's last steps (the workspace's save, the reply) made that answer later.
 */
export async function answering<T>(call: () => Promise<T>): Promise<T> {
  let open!: () => void;
  const answered = new Promise<void>((resolve) => (open = resolve));
  try {
    return await currentCall.run(answered, call);
  } finally {
    // The caller publishes the reply in the microtasks that follow (nats-rpc's respond, then
    // nats.js's flush to the socket); setImmediate runs only once they are all done.
    setImmediate(() => {
      open();
      const waiting = nextAnswered;
      nextAnswered = Promise.withResolvers<void>();
      waiting.resolve();
    });
  }
}

let nextAnswered = Promise.withResolvers<void>();

/**
 * Resolves once the answer of the next call to end (any call run with `answering`, from now on)
 * has left: work that is not needed before then waits for the gap after that answer instead of
 * joining the work already begun after this one (issue 20).
 */
export function afterNextAnswer(): Promise<void> {
  return nextAnswered.promise;
}

/** Resolves once the answer of the current call has left; at once outside a call. */
export function untilAnswered(): Promise<void> {
  return currentCall.getStore() ?? Promise.resolve();
}
