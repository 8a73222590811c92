import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { Agent, errors as undiciErrors, request } from 'undici';
import { fetchError, FetchError } from '../fetch-error.js';
import type { AddressPolicy } from '../guard/address-policy.js';
import type { GuardedDialer } from '../guard/guarded-dialer.js';
import { parseTarget, type FetchTarget } from '../guard/url-policy.js';
import { metaRefreshTarget } from './meta-refresh.js';
import { contentKind, decodeBody, detectLegacyEncoding, parseContentType, type ContentKind } from './content-type.js';

// spec 04: "10 s timeout, 3 MB body cap, at most 3 redirects".
export const FETCH_TIMEOUT_MS = 10_000;
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
export const MAX_REDIRECTS = 3;
export const CONNECT_TIMEOUT_MS = 3_000;

export const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36 DraelFetch/0.1';

export interface HttpPage {
  finalUrl: string;
  status: number;
  mime: string;
  kind: ContentKind;
  text: string;
}

export interface HttpFetchLimits {
  timeoutMs: number;
  maxBodyBytes: number;
  maxRedirects: number;
}

/**
 * Tells the legacy encoding of an unlabelled body that is not UTF-8 from a sample of its bytes,
 * for the tenant whose fetch it is (the service: on its extraction threads; content-type.ts's
 * EncodingDetector).
 */
export type EncodingDetection = (sample: Buffer, fetch: { url: string; tenant: string | undefined }) => Promise<string | undefined>;

/**
 * The HTTP path: undici with a connector that dials through the SSRF guard, so the check sits
 * where the connection is made; redirects are followed by hand so every hop is parsed and
 * vetted again.
 */
export class HttpFetcher {
  private readonly agent: Agent;

  constructor(
    private readonly dialer: GuardedDialer,
    private readonly policy: AddressPolicy,
    private readonly limits: HttpFetchLimits = { timeoutMs: FETCH_TIMEOUT_MS, maxBodyBytes: MAX_BODY_BYTES, maxRedirects: MAX_REDIRECTS },
    private readonly detectEncoding: EncodingDetection = async (sample) => detectLegacyEncoding(sample),
  ) {
    this.agent = new Agent({
      connect: (opts, callback) => {
        const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
        this.dialer.dial({ host: opts.hostname, port }).then(
          (socket) => {
            if (opts.protocol !== 'https:') return callback(null, socket);
            const host = opts.hostname.replace(/^\[|\]$/g, '');
            const tls = tlsConnect({ socket, servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] });
            tls.once('secureConnect', () => callback(null, tls));
            tls.once('error', (err) => callback(err, null));
          },
          (err: Error) => callback(err, null),
        );
      },
      headersTimeout: limits.timeoutMs,
      bodyTimeout: limits.timeoutMs,
      keepAliveTimeout: 4_000,
      connections: 64,
    });
  }

  /** The page at `target` (redirects followed, each hop vetted), for `tenant`'s fetch. */
  async fetch(target: FetchTarget, outerSignal?: AbortSignal, tenant?: string): Promise<HttpPage> {
    const signal = outerSignal ? AbortSignal.any([outerSignal, AbortSignal.timeout(this.limits.timeoutMs)]) : AbortSignal.timeout(this.limits.timeoutMs);
    try {
      return await this.follow(target, signal, tenant);
    } catch (err) {
      throw this.classify(err, target, signal);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async follow(first: FetchTarget, signal: AbortSignal, tenant: string | undefined): Promise<HttpPage> {
    let current = first;
    for (let hop = 0; ; hop++) {
      const res = await request(current.url, {
        dispatcher: this.agent,
        method: 'GET',
        signal,
        headers: {
          'user-agent': USER_AGENT,
          accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,application/json;q=0.8,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
          'accept-language': 'en;q=0.9,*;q=0.5',
        },
      });
      const status = res.statusCode;
      if (status >= 300 && status < 400 && status !== 304) {
        const location = headerValue(res.headers.location);
        await res.body.dump();
        if (!location) throw fetchError('upstream_error', `upstream answered ${status} without a Location`, { status, url: current.url.href });
        if (hop >= this.limits.maxRedirects) {
          throw fetchError('too_many_redirects', `more than ${this.limits.maxRedirects} redirects`, { url: first.url.href, last: current.url.href });
        }
        let next: string;
        try {
          next = new URL(location, current.url).href;
        } catch {
          throw fetchError('upstream_error', 'upstream redirected to an invalid URL', { status, url: current.url.href });
        }
        current = parseTarget(next, this.policy);
        continue;
      }
      if (status < 200 || status >= 300) {
        await res.body.dump();
        throw fetchError('upstream_error', `upstream answered ${status}`, { status, url: current.url.href }, status >= 500 || status === 429);
      }
      const declared = parseContentType(headerValue(res.headers['content-type']));
      const length = Number(headerValue(res.headers['content-length']) ?? NaN);
      if (Number.isFinite(length) && length > this.limits.maxBodyBytes) {
        discard(res.body);
        throw tooLarge(this.limits.maxBodyBytes, current.url.href);
      }
      if (declared && !contentKind(declared.mime)) {
        discard(res.body);
        throw fetchError('unsupported_content_type', `content type ${declared.mime} is not supported`, {
          content_type: declared.mime,
          url: current.url.href,
        });
      }
      const body = await readCapped(res.body, headerValue(res.headers['content-encoding']), this.limits.maxBodyBytes, current.url.href);
      // No declared type: sniff the two kinds a server forgets to label.
      const mime = declared?.mime ?? (/^\s*</.test(body.subarray(0, 512).toString('latin1')) ? 'text/html' : 'text/plain');
      const kind = contentKind(mime)!;
      const url = current.url.href;
      const text = await decodeBody(body, declared?.charset, kind, (sample) => this.detectEncoding(sample, { url, tenant }));
      // A page that refreshes to another at once is a redirect a browser would follow: one more
      // hop, vetted and counted like a 3xx.
      const refresh = kind === 'html' ? metaRefreshTarget(text, current.url) : undefined;
      if (refresh !== undefined) {
        if (hop >= this.limits.maxRedirects) {
          throw fetchError('too_many_redirects', `more than ${this.limits.maxRedirects} redirects`, { url: first.url.href, last: current.url.href });
        }
        current = parseTarget(refresh, this.policy);
        continue;
      }
      return { finalUrl: current.url.href, status, mime, kind, text };
    }
  }

  private classify(err: unknown, target: FetchTarget, signal: AbortSignal): FetchError {
    if (err instanceof FetchError) return err;
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof FetchError) return cause;
    if (signal.aborted || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
      return fetchError('fetch_timeout', `fetch did not finish within ${this.limits.timeoutMs} ms`, { url: target.url.href }, true);
    }
    const code = (err as NodeJS.ErrnoException).code;
    return fetchError('connection_failed', `fetch failed: ${code ?? (err as Error).message}`, { url: target.url.href }, true);
  }
}

/** Drops a body we will not read; undici reports the abort as an error nobody needs. */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function tooLarge(max: number, url: string): FetchError {
  return fetchError('body_too_large', `body is larger than ${max} bytes`, { max_bytes: max, url });
}

/**
 * The body as its Content-Encoding says to read it. Joined with pipeline, not pipe: pipe does not
 * pass the body's error on, so when the fetch's timeout ended a compressed body that had stalled,
 * the read of the decompressor waited for ever (the fetch never answered, and the replica, its
 * request in flight, could never leave its queue group).
 */
function decoded(body: Readable, encoding: string | undefined): Readable {
  const decoder = decoderFor(encoding);
  // The error reaches the reader through the decoder; the callback only keeps it from being unhandled.
  return decoder ? pipeline(body, decoder, () => undefined) : body;
}

function decoderFor(encoding: string | undefined): Transform | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

/** Reads at most `max` decoded bytes; one byte more is an error, so a zip bomb stops early too. */
async function readCapped(raw: Readable, encoding: string | undefined, max: number, url: string): Promise<Buffer> {
  const stream = decoded(raw, encoding);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > max) throw tooLarge(max, url);
      chunks.push(buf);
    }
  } finally {
    stream.destroy();
    raw.destroy();
  }
  return Buffer.concat(chunks, size);
}
