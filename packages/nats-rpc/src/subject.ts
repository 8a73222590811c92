/** The subject on the wire: a catalog subject, namespaced by the installation's prefix if it has one. */
export function wireSubject(subject: string, prefix: string): string {
  return prefix ? `${prefix}.${subject}` : subject;
}

/** The queue group of a service: replicas of one service share load, nothing else joins it. */
export function queueGroup(service: string, prefix: string): string {
  return prefix ? `${prefix}.${service}` : service;
}

export const REQUEST_ID_HEADER = 'x-request-id';

// W3C trace context travels in NATS headers under the same name as on HTTP.
export { TRACEPARENT_HEADER } from '@drael/tracing';
