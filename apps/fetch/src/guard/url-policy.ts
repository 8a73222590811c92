import { isIP } from 'node:net';
import { fetchError } from '../fetch-error.js';
import type { AddressPolicy } from './address-policy.js';

export interface FetchTarget {
  url: URL;
  /** Lowercase host without brackets or trailing dot: what is resolved or sent to Tor. */
  host: string;
  port: number;
  onion: boolean;
}

/**
 * The checks that need no DNS: scheme, credentials, literal addresses and reserved names.
 * The WHATWG parser has already normalised decimal, octal, hex and short IPv4 spellings
 * (http://0x7f.1/ → 127.0.0.1), so a literal is judged in its canonical form. Names are judged
 * again where the connection is made (guarded-dialer), on the address actually dialled.
 */
export function parseTarget(raw: string, policy: AddressPolicy): FetchTarget {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw fetchError('bad_request', 'url is not a valid absolute URL', { url: raw });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw fetchError('bad_request', `scheme ${url.protocol.replace(/:$/, '')} is not allowed; use http or https`, { url: raw });
  }
  if (url.username !== '' || url.password !== '') {
    throw fetchError('bad_request', 'credentials in the URL are not allowed', { url: redact(url) });
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === '') throw fetchError('bad_request', 'url has no host', { url: raw });
  url.hash = '';
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;

  if (isIP(host) !== 0) {
    const verdict = policy.check(host);
    if (!verdict.allowed) throw blocked(url, host, verdict.range);
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    // RFC 6761: always loopback, whatever a resolver says.
    throw blocked(url, host, 'loopback');
  }
  return { url, host, port, onion: host.endsWith('.onion') };
}

export function blocked(url: URL | string, address: string, range: string) {
  return fetchError('blocked_address', `refusing to fetch ${String(url)}: ${address} is a ${range} address`, {
    url: String(url),
    address,
    range,
  });
}

function redact(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}
