/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are probed field by field */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startGatewayProcess, startServiceProcess, testPrefix, type GatewayProcess, type ServiceProcess } from '@drael/test-support';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('ready');
let gateway: GatewayProcess;
let service: ServiceProcess | undefined;
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
  gateway = await startGatewayProcess({ NATS_URL, DRAEL_NATS_PREFIX: prefix, DRAEL_BACKEND_SERVICES: 'search', READY_TIMEOUT_MS: '500' });
});

afterAll(async () => {
  await service?.stop();
  await gateway?.stop();
  await nc?.close();
});

describe('GET /healthz and /readyz', () => {
  it('/healthz answers while the process is up, whatever the services do', async () => {
    const r = await fetch(`${gateway.url}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ok' });
  });

  it('/readyz is 503 naming the service that does not answer, and asks it with the request id', async () => {
    // A bare subscriber on the service's health subject sees the request (and never answers).
    const sub = nc.subscribe(`${prefix}.search.health.v1`, { max: 1 });
    const seen = (async () => {
      for await (const m of sub) return m.headers?.get('x-request-id');
      return undefined;
    })();
    // The subscription must be on the server before the probe asks, or the probe gets "no
    // responders" and the subscriber never sees the request.
    await nc.flush();
    const r = await fetch(`${gateway.url}/readyz`, { headers: { 'x-request-id': 'ready-probe-1' } });
    expect(r.status).toBe(503);
    const body = (await r.json()) as any;
    expect(body.error).toMatchObject({ type: 'service_unavailable_error', code: 'service_unavailable' });
    expect(body.error.message).toContain('search');
    expect(body.failing).toEqual(['search']);
    expect(body.nats).toBe(true);
    expect(await seen).toBe('ready-probe-1');
  });

  it('/readyz is 200 once every backend service answers its health subject', async () => {
    service = await startServiceProcess('search', { NATS_URL, DRAEL_NATS_PREFIX: prefix });
    const r = await fetch(`${gateway.url}/readyz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ status: 'ready', services: { 'search': 'ok' } });
  });
});
