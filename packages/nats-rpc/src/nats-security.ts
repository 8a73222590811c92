import { readFileSync } from 'node:fs';
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type ConnectionOptions,
  type NatsConnection,
} from '@nats-io/transport-node';
import type { NatsSecurityEnv } from '@drael/config';

/** What every NATS connection of an app adds to its servers: credentials and TLS (k8s/README.md "NATS"). */
export type NatsSecurity = Partial<NatsSecurityEnv>;

/**
 * The connection options for NATS_CREDS_FILE / NATS_NKEY_SEED_FILE / NATS_TOKEN / NATS_USER +
 * NATS_PASSWORD and NATS_TLS_CA_FILE / NATS_TLS_CERT_FILE / NATS_TLS_KEY_FILE. Fails closed at
 * boot: two ways of authenticating at once, a certificate without its key, a password without a
 * user or an unreadable file stop the app with a message naming the variable, rather than
 * connecting with less than the operator configured. Files are read once here, so a missing
 * Secret mount is a boot error, not a reconnect loop.
 */
export function natsConnectOptions(security: NatsSecurity = {}): Pick<ConnectionOptions, 'authenticator' | 'tls'> {
  const ways = (['NATS_CREDS_FILE', 'NATS_NKEY_SEED_FILE', 'NATS_TOKEN', 'NATS_USER'] as const).filter((k) => security[k] !== undefined);
  if (ways.length > 1) throw new Error(`NATS: set one way of authenticating, not ${ways.join(' and ')}`);
  if (security.NATS_PASSWORD !== undefined && security.NATS_USER === undefined) throw new Error('NATS_PASSWORD is set without NATS_USER');
  if ((security.NATS_TLS_CERT_FILE === undefined) !== (security.NATS_TLS_KEY_FILE === undefined)) {
    throw new Error('NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together (a client certificate and its key)');
  }
  const read = (name: keyof NatsSecurity): Buffer => {
    try {
      return readFileSync(security[name]!);
    } catch (err) {
      throw new Error(`${name}: cannot read ${security[name]}: ${(err as Error).message}`);
    }
  };
  const out: Pick<ConnectionOptions, 'authenticator' | 'tls'> = {};
  if (security.NATS_CREDS_FILE !== undefined) out.authenticator = credsAuthenticator(new Uint8Array(read('NATS_CREDS_FILE')));
  else if (security.NATS_NKEY_SEED_FILE !== undefined) out.authenticator = nkeyAuthenticator(new TextEncoder().encode(read('NATS_NKEY_SEED_FILE').toString('utf8').trim()));
  else if (security.NATS_TOKEN !== undefined) out.authenticator = tokenAuthenticator(security.NATS_TOKEN);
  else if (security.NATS_USER !== undefined) out.authenticator = usernamePasswordAuthenticator(security.NATS_USER, security.NATS_PASSWORD);
  if (security.NATS_TLS_CA_FILE !== undefined || security.NATS_TLS_CERT_FILE !== undefined) {
    // PEM contents rather than paths: the files are checked now, and reconnects need no file access.
    out.tls = {
      ...(security.NATS_TLS_CA_FILE !== undefined ? { ca: read('NATS_TLS_CA_FILE').toString('utf8') } : {}),
      ...(security.NATS_TLS_CERT_FILE !== undefined ? { cert: read('NATS_TLS_CERT_FILE').toString('utf8'), key: read('NATS_TLS_KEY_FILE').toString('utf8') } : {}),
    };
  }
  return out;
}

/**
 * Every NATS connection an app opens: the operator's credentials and TLS (natsConnectOptions) are
 * never left out, and it reconnects for ever (a NATS restart is an outage to ride out, not a
 * reason to stop). A connection made with `connect` itself once left the sandbox's JetStream
 * stores without credentials, and the sandbox could not boot behind a NATS that asks for them.
 */
export function connectNats(
  options: { servers: string | string[]; name?: string; security?: NatsSecurity } & Omit<ConnectionOptions, 'servers' | 'name' | 'authenticator' | 'tls'>,
): Promise<NatsConnection> {
  const { security, ...rest } = options;
  return connect({ maxReconnectAttempts: -1, reconnectTimeWait: 500, ...rest, ...natsConnectOptions(security) });
}
