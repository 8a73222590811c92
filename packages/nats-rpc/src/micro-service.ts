import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { Svcm, type Service, type ServiceMsg } from '@nats-io/services';

/** One endpoint: its subject on the wire, its queue group, and the handler that answers it. */
export interface MicroEndpoint {
  /** A simple token (`[-\w]+`), shown by `nats micro info`. */
  name: string;
  subject: string;
  queue: string;
  metadata: Record<string, string>;
  /** Answers the message; resolves to the error text if the answer was an error, else undefined. */
  handle(msg: Msg): Promise<string | undefined>;
}

export interface MicroServiceConfig {
  name: string;
  version: string;
  description: string;
  metadata: Record<string, string>;
}

/**
 * Per-endpoint counters in the shape of the micro protocol's STATS reply, kept by this adapter.
 *
 * @nats-io/services 3.0.0-25 times only the synchronous part of a handler and counts an error
 * only when the handler throws; Drael's handlers are async and answer errors as reply envelopes,
 * so its figures would read ~0 ns and 0 errors. Go's `micro` counts a request whose reply is an
 * error as an error, and times it to the reply. This record takes the library's place on each
 * endpoint (the library calls countLatency/countError/stats/reset on it): countLatency is a no-op
 * and `finish()` counts the request when its answer has been sent, an error reply as an error.
 */
class EndpointStats {
  num_requests = 0;
  num_errors = 0;
  processing_time = 0;
  average_processing_time = 0;
  last_error: string | undefined;
  data: unknown;

  constructor(
    readonly name: string,
    readonly subject: string,
    readonly queue: string,
  ) {}

  countLatency(): void {}

  countError(err: Error): void {
    this.num_errors++;
    this.last_error = err.message;
  }

  finish(nanos: number, error: string | undefined): void {
    this.num_requests++;
    this.processing_time += nanos;
    this.average_processing_time = Math.round(this.processing_time / this.num_requests);
    if (error !== undefined) this.countError(new Error(error));
  }

  reset(): void {
    this.num_requests = 0;
    this.num_errors = 0;
    this.processing_time = 0;
    this.average_processing_time = 0;
    this.last_error = undefined;
    this.data = undefined;
  }

  stats() {
    const { name, subject, average_processing_time, num_errors, num_requests, processing_time, last_error, data } = this;
    return { name, subject, average_processing_time, num_errors, num_requests, processing_time, last_error, data, queue_group: this.queue };
  }
}

/** The library's record of an endpoint (not in its public types): where its stats object lives. */
interface EndpointRecord {
  subject: string;
  stats: unknown;
}

export interface MicroRegistration {
  readonly id: string;
  /** Stops taking messages: drains the endpoints' and the $SRV subscriptions. */
  stop(): Promise<void>;
}

/**
 * Registers a service with the NATS services protocol (`$SRV.PING|INFO|STATS[.name[.id]]`), its
 * endpoints being the service's ONE subscription per subject: each request is handled once, in
 * the service's queue group, and counted where it is handled.
 *
 * The second known limit of @nats-io/services 3.0.0-25, that a queue-group name may not contain
 * `.` (Drael's is `<prefix>.<service>` when a prefix is set), applies only to the service-wide
 * default it validates; an endpoint's own queue is taken as given, so every endpoint names its
 * queue group and the service-wide default is a placeholder no endpoint uses.
 */
export async function registerMicroService(nc: NatsConnection, config: MicroServiceConfig, endpoints: MicroEndpoint[]): Promise<MicroRegistration> {
  // The library is typed against its own pinned @nats-io/nats-core; at run time it uses only the
  // connection's public subscribe/publish/closed, which transport-node 3.4's connection has.
  const service: Service = await new Svcm(nc as unknown as ConstructorParameters<typeof Svcm>[0]).add({ ...config, queue: 'unused' });
  const records = (service as unknown as { handlers: EndpointRecord[] }).handlers;
  for (const endpoint of endpoints) {
    const stats = new EndpointStats(endpoint.name, endpoint.subject, endpoint.queue);
    service.addEndpoint(endpoint.name, {
      subject: endpoint.subject,
      queue: endpoint.queue,
      metadata: endpoint.metadata,
      handler: (err: Error | null, msg: ServiceMsg) => {
        if (err) return;
        const started = process.hrtime.bigint();
        // The library wraps each message (ServiceMsgImpl, which keeps the original as `msg`); the
        // handler gets the transport's own Msg.
        const raw = (msg as unknown as { msg?: Msg }).msg ?? (msg as unknown as Msg);
        endpoint.handle(raw).then(
          (error) => stats.finish(Number(process.hrtime.bigint() - started), error),
          (e: unknown) => stats.finish(Number(process.hrtime.bigint() - started), e instanceof Error ? e.message : String(e)),
        );
      },
    });
    const record = records.find((r) => r.subject === endpoint.subject);
    if (!record) throw new Error(`@nats-io/services: no record for endpoint ${endpoint.subject} (library internals changed?)`);
    record.stats = stats;
  }
  // Every subscription is known to the server before the service says it is listening.
  await nc.flush();
  return {
    id: service.info().id,
    stop: async () => {
      await service.stop();
    },
  };
}
