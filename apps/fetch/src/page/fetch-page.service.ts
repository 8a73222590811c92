import { MAX_PAGE_BYTES, type FetchPageReply, type FetchPageRequest } from '@drael/contracts';
import { inSpan } from '@drael/tracing';
import type { BrowserPool } from '../browser/browser-pool.js';
import { cacheKey, type CachedPage, type PageCache } from '../cache/page-cache.js';
import { truncate } from '../extract/focus.js';
import type { ExtractionPool } from '../extract/extraction-pool.js';
import { normaliseSpace } from '../extract/html-extractor.js';
import { fetchError, FetchError } from '../fetch-error.js';
import type { AddressPolicy } from '../guard/address-policy.js';
import { parseTarget } from '../guard/url-policy.js';
import type { ContentKind } from '../http/content-type.js';
import { FETCH_TIMEOUT_MS, type HttpFetcher } from '../http/http-fetcher.js';
import { measurePage, recordCacheLookup } from '../fetch.metrics.js';

// render: auto goes to the browser when the HTTP path yields less readable text than this from
// an HTML page, or an HTML error page of the kind bot challenges answer with.
const AUTO_BROWSER_BELOW_CHARS = 200;
// ... and, up to this much text, when the served HTML leaves its content for a script to fill in
// (awaitsScript): the text it has is the page's chrome or a standfirst, not the page.
const AUTO_BROWSER_SCRIPT_FILLED_BELOW_CHARS = 2_000;
const CHALLENGE_STATUSES = new Set([403, 429, 503]);

/** The rules of a fetch: guard, cache, path choice, extraction, focus and bounds. */
export class FetchPageService {
  private readonly scripted = new WeakSet<CachedPage>();
  /** Scripted pages whose served HTML leaves the content to a script (extract/script-filled.ts). */
  private readonly scriptFilled = new WeakSet<CachedPage>();
  /** Pages a tenant's own browser context rendered: cached under that tenant's key only. */
  private readonly tenantRendered = new WeakSet<CachedPage>();

  constructor(
    private readonly policy: AddressPolicy,
    private readonly http: HttpFetcher,
    private readonly browser: BrowserPool | undefined,
    private readonly reader: Pick<ExtractionPool, 'read' | 'formatText' | 'focus'>,
    private readonly cache: PageCache | undefined,
  ) {}

  async fetch(req: FetchPageRequest): Promise<FetchPageReply> {
    const started = performance.now();
    const target = parseTarget(req.url, this.policy);
    const render = req.render ?? 'auto';
    // A page fetched over HTTP is everyone's; one a tenant's own browser context rendered is that
    // tenant's (its cookies), kept under its own key.
    const shared = cacheKey(target.url.href, req.focus, render);
    const own = req.tenant !== undefined && render !== 'http' ? cacheKey(target.url.href, req.focus, render, req.tenant) : undefined;

    let page = (await this.cache?.get(shared)) ?? (own === undefined ? undefined : await this.cache?.get(own));
    const cached = page !== undefined;
    if (this.cache) recordCacheLookup(cached);
    if (!page) {
      const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
      // When this request's own timeout ends: a render still waiting for a browser page then is
      // refused, not loaded later for nobody.
      const deadline = Date.now() + FETCH_TIMEOUT_MS;
      // The page fetch's span (a cache hit has none): the network and rendering part of the call.
      page = await inSpan('page fetch', { kind: 'client', attributes: { 'drael.fetch.render': render } }, () =>
        render === 'http'
          ? this.viaHttp(target.url.href, signal, req.tenant)
          : render === 'browser'
            ? this.viaBrowser(target.url.href, signal, deadline, req.tenant)
            : this.viaAuto(target.url.href, signal, deadline, req.tenant),
      );
      await this.cache?.set(this.tenantRendered.has(page) && own !== undefined ? own : shared, page);
    }

    // spec 02: a returned page is bounded at 1 MiB; max_chars may ask for less, and offset for a
    // later window of the same (focused) text: a reader goes on where `next_offset` says.
    // Finding the focus reads every block of the page (up to megabytes, a cached page's too): on the threads.
    const focused = req.focus
      ? await this.reader.focus({ content: page.content, focus: req.focus, budget: req.max_chars ?? MAX_PAGE_BYTES }, { url: page.final_url, tenant: req.tenant })
      : page.content;
    const cut = truncate(focused, req.max_chars ?? MAX_PAGE_BYTES, req.offset);
    const bounded = boundBytes(cut.text, MAX_PAGE_BYTES);
    const offset = Math.min(req.offset ?? 0, focused.length);
    const next = bounded.truncated ? offset + bounded.text.length : cut.next;
    return {
      url: req.url,
      final_url: page.final_url,
      title: page.title,
      byline: page.byline,
      description: page.description,
      canonical: page.canonical,
      lang: page.lang,
      content_type: page.content_type,
      content: bounded.text,
      chars: bounded.text.length,
      total_chars: focused.length,
      ...(next !== undefined ? { next_offset: next } : {}),
      truncated: cut.truncated || bounded.truncated,
      took_ms: Math.round(performance.now() - started),
      cached,
    };
  }

  private async viaHttp(url: string, signal: AbortSignal, tenant: string | undefined): Promise<CachedPage> {
    const target = parseTarget(url, this.policy);
    const res = await measurePage(target.onion ? 'onion' : 'http', () => this.http.fetch(target, signal, tenant));
    // Whether the served HTML waits for a script is asked only of a page short enough for auto mode to care.
    const { page, scriptFilled } = await this.toPage(res.finalUrl, res.mime, res.kind, res.text, tenant, AUTO_BROWSER_SCRIPT_FILLED_BELOW_CHARS);
    // A page without scripts renders the same in a browser: auto mode does not try one.
    if (res.kind === 'html' && /<script\b/i.test(res.text)) {
      this.scripted.add(page);
      if (scriptFilled) this.scriptFilled.add(page);
    }
    return page;
  }

  private async viaBrowser(url: string, signal: AbortSignal, deadline: number, tenant: string | undefined): Promise<CachedPage> {
    if (!this.browser) throw fetchError('browser_unavailable', 'the browser path is turned off on this installation', { url });
    const browser = this.browser;
    const res = await measurePage('browser', () => browser.render(url, { signal, deadline, ...(tenant !== undefined ? { tenant } : {}) }));
    if (res.status >= 400) {
      throw fetchError('upstream_error', `upstream answered ${res.status}`, { status: res.status, url: res.finalUrl }, res.status >= 500);
    }
    const { page } = await this.toPage(res.finalUrl, res.mime, 'html', res.html, tenant);
    if (tenant !== undefined) this.tenantRendered.add(page);
    return page;
  }

  private async viaAuto(url: string, signal: AbortSignal, deadline: number, tenant: string | undefined): Promise<CachedPage> {
    let fromHttp: CachedPage | undefined;
    let httpError: FetchError | undefined;
    try {
      fromHttp = await this.viaHttp(url, signal, tenant);
      if (fromHttp.content_type !== 'text/html' && fromHttp.content_type !== 'application/xhtml+xml') return fromHttp;
      if (!this.scripted.has(fromHttp)) return fromHttp;
      if (normaliseSpace(fromHttp.content).length >= AUTO_BROWSER_BELOW_CHARS && !this.scriptFilled.has(fromHttp)) return fromHttp;
    } catch (err) {
      if (!(err instanceof FetchError)) throw err;
      const status = Number(err.details?.status);
      if (err.code !== 'upstream_error' || !CHALLENGE_STATUSES.has(status)) throw err;
      httpError = err;
    }
    if (!this.browser || signal.aborted) {
      if (fromHttp) return fromHttp;
      throw httpError!;
    }
    try {
      const rendered = await this.viaBrowser(url, signal, deadline, tenant);
      // A render that read less than the served HTML held (its script failed, or filled nothing)
      // is no improvement on it.
      return fromHttp && normaliseSpace(rendered.content).length < normaliseSpace(fromHttp.content).length ? fromHttp : rendered;
    } catch (err) {
      // A blocked hop seen only by the browser is an answer in itself, never hidden.
      if (err instanceof FetchError && err.code === 'blocked_address') throw err;
      if (fromHttp) return fromHttp;
      throw httpError ?? err;
    }
  }

  /**
   * The page as cached, read on the extraction threads when it is HTML; `scriptFilled`: whether
   * its HTML leaves its content to a script (asked only below `scriptFilledBelowChars` of text).
   */
  private async toPage(
    finalUrl: string,
    mime: string,
    kind: ContentKind,
    text: string,
    tenant: string | undefined,
    scriptFilledBelowChars?: number,
  ): Promise<{ page: CachedPage; scriptFilled: boolean }> {
    if (kind === 'html') {
      const page = await this.reader.read({ html: text, url: finalUrl, ...(scriptFilledBelowChars !== undefined ? { scriptFilledBelowChars } : {}) }, tenant);
      return {
        scriptFilled: page.scriptFilled,
        page: {
          final_url: finalUrl,
          title: page.title,
          byline: page.byline,
          description: page.description,
          canonical: page.canonical,
          lang: page.lang,
          content_type: mime,
          content: page.markdown,
        },
      };
    }
    return {
      scriptFilled: false,
      page: {
        final_url: finalUrl,
        title: null,
        byline: null,
        description: null,
        canonical: null,
        lang: null,
        content_type: mime,
        content: await this.reader.formatText({ kind, text }, { url: finalUrl, tenant }),
      },
    };
  }
}

function boundBytes(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return { text, truncated: false };
  // Cut on a character boundary: decode the first maxBytes and drop a split trailing character.
  const cut = Buffer.from(text, 'utf8')
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return { text: cut, truncated: true };
}
