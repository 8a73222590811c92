import type { RpcEntry } from '@drael/contracts';
import type { NatsRpcClient, RpcError } from '@drael/nats-rpc';

/** A request the double was sent: its subject and payload. */
export interface SentRequest {
  subject: string;
  payload: Record<string, unknown>;
}

/**
 * A NatsRpcClient for a unit test of a caller: requests to `failing` fail with `failure`, every
 * other request is answered `answer(payload)`, and every request is recorded in `sent` (to see,
 * say, that a caller cancels what it asked for once its answer is lost).
 */
export function rpcFailingOn(failing: RpcEntry, failure: RpcError, answer: (payload: Record<string, unknown>) => unknown): { rpc: NatsRpcClient; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const rpc = {
    request: (entry: RpcEntry, payload: Record<string, unknown>) => {
      sent.push({ subject: entry.subject, payload });
      return entry === failing ? Promise.reject(failure) : Promise.resolve(answer(payload));
    },
  } as unknown as NatsRpcClient;
  return { rpc, sent };
}
