import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

/**
 * A small OTLP/HTTP trace receiver: what a collector is to Drael's exporter (OTEL_EXPORTER_OTLP_ENDPOINT
 * = `url`). It takes `POST /v1/traces` with a protobuf `ExportTraceServiceRequest` body (the
 * encoding Drael's exporter sends; gzip or not), decodes it with protobufjs and keeps every span.
 * Anything else is refused as a collector would (404, 405, 415, 400).
 */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
  /** The resource's `service.name`. */
  readonly service: string;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received (accepted or refused). */
  readonly requests: number;
  /** Resolves with the spans once `predicate` holds for them (checked at each export), or rejects after `timeoutMs`. */
  waitFor(predicate: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

// The OTLP messages a trace export carries, with the field numbers of the protocol's definitions
// (opentelemetry-proto: collector/trace/v1, trace/v1, resource/v1, common/v1). Only what a
// receiver reads is declared; protobuf skips the rest (events, links, schema URLs) by design.
const OTLP = protobuf.Root.fromJSON({
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
    ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        parentSpanId: { type: 'bytes', id: 4 },
        name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 },
        startTimeUnixNano: { type: 'fixed64', id: 7 },
        endTimeUnixNano: { type: 'fixed64', id: 8 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
        status: { type: 'Status', id: 15 },
      },
    },
    Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'bytesValue'] } },
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
        bytesValue: { type: 'bytes', id: 7 },
      },
    },
  },
});
const ExportTraceServiceRequest = OTLP.lookupType('ExportTraceServiceRequest');
const KINDS: ReceivedSpan['kind'][] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

interface DecodedValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  bytesValue?: string;
}
interface DecodedKeyValue {
  key: string;
  value?: DecodedValue;
}
interface DecodedSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes?: DecodedKeyValue[];
  status?: { code?: number };
}
interface DecodedRequest {
  resourceSpans?: Array<{ resource?: { attributes?: DecodedKeyValue[] }; scopeSpans?: Array<{ spans?: DecodedSpan[] }> }>;
}

function valueOf(v: DecodedValue | undefined): string | number | boolean {
  if (!v) return '';
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.bytesValue ?? '';
}

function attributesOf(list: DecodedKeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

const hex = (base64: string | undefined): string => Buffer.from(base64 ?? '', 'base64').toString('hex');

/** The spans of one protobuf ExportTraceServiceRequest body. */
export function decodeTraceExport(body: Uint8Array): ReceivedSpan[] {
  const message = ExportTraceServiceRequest.decode(body);
  // Ids as base64 then hex, 64-bit times as decimal strings (no precision lost).
  const decoded = ExportTraceServiceRequest.toObject(message, { longs: String, bytes: String, defaults: false }) as DecodedRequest;
  const spans: ReceivedSpan[] = [];
  for (const rs of decoded.resourceSpans ?? []) {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name ?? '',
          kind: KINDS[s.kind ?? 0] ?? 'unspecified',
          service,
          attributes: attributesOf(s.attributes),
          statusCode: s.status?.code ?? 0,
          startNs: BigInt(s.startTimeUnixNano ?? '0'),
          endNs: BigInt(s.endTimeUnixNano ?? '0'),
        });
      }
    }
  }
  return spans;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const answer = (status: number, body = '') => res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    if (req.url !== '/v1/traces') return answer(404, 'only /v1/traces is served');
    if (req.method !== 'POST') return answer(405);
    if (req.headers['content-type'] !== 'application/x-protobuf') return answer(415, 'protobuf only (application/x-protobuf)');
    readBody(req).then(
      (body) => {
        let received: ReceivedSpan[];
        try {
          received = decodeTraceExport(body);
        } catch (err) {
          return answer(400, `not an ExportTraceServiceRequest: ${(err as Error).message}`);
        }
        spans.push(...received);
        // An empty ExportTraceServiceResponse: full success.
        res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 }).end();
        for (const wake of waiters) wake();
      },
      () => answer(400),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    get requests() {
      return requests;
    },
    waitFor(predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve([...spans]);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`otlp receiver: the spans awaited did not arrive in ${timeoutMs} ms; got ${spans.map((s) => `${s.service}:${s.name}`).join(', ')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
