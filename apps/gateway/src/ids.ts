import { randomUUID } from 'node:crypto';

/**
 * A fresh opaque id: 32 lowercase hex characters carrying the 122 random bits of a version-4 UUID
 * from Node's CSPRNG. Node hands UUIDs out of a pre-filled random buffer (~0.4 µs each), where each
 * `randomBytes()` call is a trip into OpenSSL (~4 µs on Node 24): per-request ids (completion ids,
 * request workspaces, tool call ids) cost 30 µs of a catalogue request's CPU before this
 * (bench/gateway-passthrough/load.mjs profile, 2026-12-01).
 */
export function randomId(): string {
  return randomUUID().replaceAll('-', '');
}
