import { connect, type Socket } from 'node:net';
import { fetchError, type FetchError } from '../fetch-error.js';

// Tor's SOCKS5 replies, including its onion-specific extended codes (tor's SocksPort ExtendedErrors).
// Written by hand rather than with the `socks` package because that package reports these
// codes as "undefined", and a hand-rolled CONNECT is thirty lines on a raw socket that both the
// undici connector and the browser's filtering proxy can use (socks-proxy-agent is an
// http.Agent, which undici ignores).
const SOCKS_REPLIES: Record<number, string> = {
  0x01: 'general SOCKS server failure',
  0x02: 'connection not allowed by ruleset',
  0x03: 'network unreachable',
  0x04: 'host unreachable',
  0x05: 'connection refused',
  0x06: 'TTL expired (the onion service did not answer in time)',
  0x07: 'command not supported',
  0x08: 'address type not supported',
  0xf0: 'onion service descriptor not found (the service is offline or the address is wrong)',
  0xf1: 'onion service descriptor is invalid',
  0xf2: 'onion service introduction failed',
  0xf3: 'onion service rendezvous failed',
  0xf4: 'onion service requires client authorization',
  0xf5: 'onion service client authorization was rejected',
  0xf6: 'invalid onion address',
  0xf7: 'onion service introduction timed out',
};

/**
 * Opens a TCP stream to host:port through a SOCKS5 proxy, sending the hostname itself (ATYP 3,
 * the "socks5h" behaviour) so the name is resolved by Tor and never by this machine.
 */
export class Socks5hDialer {
  constructor(
    private readonly proxyHost: string,
    private readonly proxyPort: number,
  ) {}

  static fromUrl(url: string): Socks5hDialer {
    const u = new URL(url);
    if (u.protocol !== 'socks5h:' && u.protocol !== 'socks:') {
      // socks5:// would resolve the name locally first and leak it to this host's resolver.
      throw new Error(`TOR_SOCKS_URL must be socks5h://host:port, got ${u.protocol}`);
    }
    return new Socks5hDialer(u.hostname.replace(/^\[|\]$/g, ''), Number(u.port || 9050));
  }

  dial(host: string, port: number, timeoutMs: number, signal?: AbortSignal): Promise<Socket> {
    const nameBytes = Buffer.from(host, 'ascii');
    if (nameBytes.length > 255) return Promise.reject(fetchError('bad_request', 'host name too long', { host }));
    return new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: this.proxyHost, port: this.proxyPort });
      let buf = Buffer.alloc(0);
      let stage: 'greeting' | 'connect' = 'greeting';
      const fail = (err: FetchError) => {
        cleanup();
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(() => fail(fetchError('onion_unreachable', `Tor did not connect to ${host} in time`, { host }, true)), timeoutMs);
      const onAbort = () => fail(fetchError('fetch_timeout', 'fetch timed out', { host }, true));
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('data', onData);
        socket.off('error', onError);
      };
      const onError = (err: Error) => fail(fetchError('onion_unreachable', `Tor's SOCKS port is not reachable: ${err.message}`, { host }, true));
      const onData = (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        if (stage === 'greeting') {
          if (buf.length < 2) return;
          if (buf[0] !== 0x05 || buf[1] !== 0x00) {
            return fail(fetchError('onion_unreachable', 'Tor SOCKS port refused the no-auth greeting', { host }, true));
          }
          buf = buf.subarray(2);
          stage = 'connect';
          const portBytes = Buffer.from([(port >> 8) & 0xff, port & 0xff]);
          socket.write(Buffer.concat([Buffer.from([0x05, 0x01, 0x00, 0x03, nameBytes.length]), nameBytes, portBytes]));
        }
        if (stage === 'connect') {
          if (buf.length < 5) return;
          const rep = buf[1]!;
          if (rep !== 0x00) {
            const reason = SOCKS_REPLIES[rep] ?? `SOCKS reply ${rep}`;
            return fail(fetchError('onion_unreachable', `Tor could not reach ${host}: ${reason}`, { host, socks_reply: rep, reason }, rep !== 0xf6));
          }
          const atyp = buf[3];
          const addrLen = atyp === 0x01 ? 4 : atyp === 0x04 ? 16 : 1 + buf[4]!;
          const total = 4 + addrLen + 2;
          if (buf.length < total) return;
          cleanup();
          // Nothing may be lost between the handshake and whoever reads the stream next.
          socket.pause();
          const rest = buf.subarray(total);
          if (rest.length > 0) socket.unshift(rest);
          resolve(socket);
        }
      };
      socket.on('data', onData);
      socket.on('error', onError);
      socket.once('connect', () => socket.write(Buffer.from([0x05, 0x01, 0x00])));
    });
  }
}
