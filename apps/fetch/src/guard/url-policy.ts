import { isIP } from 'node:net';
import { fetchError } from '../fetch-error.js';
import type { AddressPolicy } from './address-policy.js';
import { reservedName } from './reserved-names.js';
import { recordSsrfRefusal } from '../fetch.metrics.js';

export interface FetchTarget {
  url: URL;
  /** Lowercase host without brackets or trailing dot: what is resolved or sent to Tor. */
  host: string;
  port: number;
  onion: boolean;
}

/**
 * The checks that need no DNS: scheme, credentials, literal addresses and reserved names
 * (localhost, cloud metadata names, `.internal`: reserved-names.ts).
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
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === '') throw fetchError('bad_request', 'url has no host', { url: raw });
  url.hash = '';
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;

  if (isIP(host) !== 0) {
    const verdict = policy.check(host);
    if (!verdict.allowed) throw blocked(url, host, verdict.range);
  } else {
    const reserved = reservedName(host);
    if (reserved) throw blocked(url, host, reserved);
  }
  return { url, host, port, onion: host.endsWith('.onion') };
}

/**
 * The one refusal of a destination. Its message is the same whatever the reason, and it never
 * names the address a name resolved to nor the kind of range: otherwise a caller could map which
 * internal names exist and where they point. `range` is kept in the details only when `host` is
 * itself an address literal (the caller wrote it; nothing is revealed).
 */
export function blocked(url: URL | string, host: string, range: string) {
  recordSsrfRefusal(range);
  return fetchError('blocked_address', `refusing to fetch ${String(url)}: the host ${NOT_PUBLIC}`, {
    url: String(url),
    ...(isIP(host.replace(/^\[|\]$/g, '')) !== 0 ? { range } : {}),
  });
}

export const NOT_PUBLIC = 'does not resolve to a public address';

function redact(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}
