import { metrics, type HistogramHandle } from '@drael/metrics';
import { RpcError } from './rpc-error.js';

// Subjects come from the catalogs (tens); outcomes are `ok` or a service's error code.
const labels = { subject: 200, outcome: 60 } as const;

const clientRequests = metrics.histogram({
  name: 'drael_rpc_client_request_duration_seconds',
  help: 'NATS RPC requests this process sent, by subject and outcome (ok or the error code), from send to reply',
  labels,
});
const clientInFlight = metrics.gauge({ name: 'drael_rpc_client_in_flight', help: 'NATS RPC requests this process is waiting on, by subject', labels: { subject: 200 } });
const handlerRequests = metrics.histogram({
  name: 'drael_rpc_handler_duration_seconds',
  help: 'NATS RPC requests this process handled, by subject and outcome (ok or the error code it answered)',
  labels,
});
const handlerInFlight = metrics.gauge({ name: 'drael_rpc_handler_in_flight', help: 'NATS RPC handlers running in this process, by subject', labels: { subject: 200 } });

/** The outcome label of a settled request: `ok`, or the typed error's code. */
export function outcomeOf(err: unknown): string {
  return err === undefined ? 'ok' : err instanceof RpcError ? err.code : 'internal';
}

/** Times one RPC: call at the start, then call the result with the outcome once it is settled. */
function track(h: HistogramHandle<'subject' | 'outcome'>, g: typeof clientInFlight, subject: string): (outcome: string) => void {
  const at = { subject };
  g.inc(at);
  const done = h.time(at);
  return (outcome) => {
    g.dec(at);
    done({ outcome });
  };
}

export const trackClientRequest = (subject: string) => track(clientRequests, clientInFlight, subject);
export const trackHandler = (subject: string) => track(handlerRequests, handlerInFlight, subject);
