#!/usr/bin/env node
// Readiness probe for a NATS-only Drael service (Kubernetes exec probe, compose healthcheck):
// asks <service>.health.v1 in Nest's packet format and exits 0 when the service answers ok.
// Usage (from apps/<service>/, where @nats-io/transport-node resolves): node nats-health.mjs <service>
import { connect } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';

const service = process.argv[2];
const prefix = process.env.DRAEL_NATS_PREFIX ? `${process.env.DRAEL_NATS_PREFIX}.` : '';
let nc;
try {
  nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', timeout: 2000 });
  const subject = `${service}.health.v1`;
  const msg = await nc.request(`${prefix}${subject}`, JSON.stringify({ pattern: subject, data: {}, id: randomUUID() }), { timeout: 2000 });
  const ok = msg.json()?.response?.result?.status === 'ok';
  if (!ok) console.error(`${service}: unexpected health reply ${msg.string()}`);
  await nc.close();
  process.exit(ok ? 0 : 1);
} catch (err) {
  console.error(`${service}: not answering ${prefix}${service}.health.v1: ${err.message}`);
  await nc?.close().catch(() => {});
  process.exit(1);
}
