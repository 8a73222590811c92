import { connect, isIP, type Socket } from 'node:net';
import { fetchError } from '../fetch-error.js';
import type { Socks5hDialer } from '../onion/socks5h.dialer.js';
import type { AddressPolicy } from './address-policy.js';
import type { Resolver } from './resolver.js';
import { reservedName } from './reserved-names.js';
import { blocked } from './url-policy.js';

export interface DialRequest {
  host: string;
  port: number;
  /** For error details only. */
  url?: string;
  signal?: AbortSignal;
}

/**
 * The one place a fetch opens a TCP connection, for the HTTP path and for the browser's proxy
 * alike. Clear-web names are resolved here, every answer is vetted, and the socket is opened to
 * exactly the vetted address: there is no second lookup an attacker's DNS could answer
 * differently (rebinding). .onion names go to Tor as names and never to the resolver.
 */
export class GuardedDialer {
  constructor(
    private readonly policy: AddressPolicy,
    private readonly resolver: Resolver,
    private readonly tor: Socks5hDialer | undefined,
    private readonly connectTimeoutMs: number,
    private readonly onionTimeoutMs: number,
  ) {}

  async dial({ host, port, url, signal }: DialRequest): Promise<Socket> {
    const bare = host
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
    const where = url ?? `${bare}:${port}`;
    if (bare.endsWith('.onion')) {
      if (!this.tor) throw fetchError('onion_unreachable', 'Tor is not configured on this installation', { url: where });
      return this.tor.dial(bare, port, this.onionTimeoutMs, signal);
    }
    let addresses: string[];
    if (isIP(bare) !== 0) {
      addresses = [bare];
    } else {
      const reserved = reservedName(bare);
      if (reserved) throw blocked(where, bare, reserved);
      try {
        addresses = (await withinTime(this.resolver.resolve(bare), this.connectTimeoutMs, signal)).map((a) => a.address);
      } catch (err) {
        if (err instanceof ResolveTimeout) {
          throw fetchError('dns_failure', `could not resolve ${bare} within ${this.connectTimeoutMs} ms`, { url: where, cause: 'timeout' }, true);
        }
        throw fetchError('dns_failure', `could not resolve ${bare}`, { url: where, cause: (err as NodeJS.ErrnoException).code ?? String(err) }, true);
      }
      if (addresses.length === 0) throw fetchError('dns_failure', `${bare} has no address`, { url: where }, true);
    }
    // A name with one private answer among public ones is refused whole: which answer a
    // client picks is not ours to predict.
    for (const address of addresses) {
      const verdict = this.policy.check(address);
      if (!verdict.allowed) throw blocked(where, bare, verdict.range);
    }
    let lastError: unknown;
    for (const address of addresses) {
      try {
        return await this.connectTo(address, port, signal);
      } catch (err) {
        lastError = err;
        if (signal?.aborted) break;
      }
    }
    throw lastError;
  }

  private connectTo(address: string, port: number, signal?: AbortSignal): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: address, port });
      const done = (err?: Error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('error', onError);
        if (err) {
          socket.destroy();
          reject(err);
        } else resolve(socket);
      };
      const onError = (err: NodeJS.ErrnoException) =>
        done(fetchError('connection_failed', `could not connect to ${address}:${port} (${err.code ?? err.message})`, { address, port }, true));
      const onAbort = () => done(fetchError('fetch_timeout', 'fetch timed out', { address, port }, true));
      const timer = setTimeout(() => done(fetchError('fetch_timeout', `connecting to ${address}:${port} timed out`, { address, port }, true)), this.connectTimeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      socket.once('error', onError);
      socket.once('connect', () => done());
    });
  }
}

class ResolveTimeout extends Error {}

/**
 * The lookup's answer, or a refusal once it has taken `ms` (or the fetch was aborted). A lookup is
 * part of connecting and gets the connect's time: a name whose DNS answered slowly held the fetch
 * past its own timeout (6 s against 1.5), one that never answered held it for good, as the HTTP
 * path's connector cannot be aborted before it returns. getaddrinfo itself cannot be stopped; its
 * answer, when it comes, is dropped.
 */
function withinTime<T>(lookup: Promise<T>, ms: number, signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = (err: Error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    };
    const onAbort = () => stop(signal!.reason instanceof Error ? signal!.reason : new ResolveTimeout('aborted'));
    const timer = setTimeout(() => stop(new ResolveTimeout(`no answer within ${ms} ms`)), ms);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    lookup.then(
      (value) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => stop(err instanceof Error ? err : new Error(String(err))),
    );
  });
}
