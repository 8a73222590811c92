import { ANONYMOUS_TENANT, FairSlots, type FairSlotLimits, type Refusal } from '@drael/fair-slots';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page, type Request, type Response } from 'playwright-core';
import { MAX_REDIRECTS } from '../http/http-fetcher.js';
import { fetchError, FetchError } from '../fetch-error.js';
import { blocked } from '../guard/url-policy.js';
import { BLOCKED_HEADER, type FilteringProxy } from './filtering-proxy.js';
import { recordMemoryStop, watchBrowser } from '../fetch.metrics.js';
import { BrowserMemoryWatch, type ChromiumProcess } from './browser-memory.js';

export interface RenderedPage {
  finalUrl: string;
  status: number;
  mime: string;
  html: string;
}

export interface BrowserPoolOptions {
  chromiumPath: string;
  /** Pages at once and renders waiting, in all and per tenant (FETCH_BROWSER_CONCURRENCY, ...). */
  slots: FairSlotLimits;
  /** Fresh contexts made ahead of time, so a request does not wait for one. */
  spare: number;
  timeoutMs: number;
  /** The most memory a page may make a renderer, or the browser process, hold while it renders (FETCH_RENDERER_MAX_MB, in bytes): past it the page is refused. */
  rendererMaxBytes: number;
}

// After `load`, a page is given up to SETTLE_MS more for its scripts: until no document, script,
// XHR or fetch request of its own has been in flight for NETWORK_QUIET_MS (content a script asks
// an API for after load), and its body holds at least SETTLE_TEXT_CHARS of text (client-rendered
// pages, bot challenges that compute, then reload). Images, fonts, media and long-lived streams do
// not count: they neither bring text nor end.
const SETTLE_TEXT_CHARS = 200;
const SETTLE_MS = 2_000;
const NETWORK_QUIET_MS = 300;
const SETTLE_REQUEST_TYPES = new Set(['document', 'script', 'xhr', 'fetch']);
// Tenants whose warm context is kept; the least recently used beyond this is closed.
const MAX_TENANT_CONTEXTS = 16;

interface TenantContext {
  context: BrowserContext;
  page: Page;
  busy: boolean;
  /** Settles when the page is blank again after the previous request: false when it would not leave (the context is closed). */
  idle: Promise<boolean>;
}

/**
 * Counts the hops of each document request as Chromium makes them and fails the one past the
 * limit before it is sent (spec 04: at most 3 redirects). Playwright's routes never see
 * redirect hops, and the proxy sees only a CONNECT for https, so the cap sits on the page's
 * own DevTools session: only document requests pause there, subresources are not slowed.
 */
class RedirectCap {
  /** The first URL refused since the last reset(). */
  refused: string | undefined;
  private readonly hops = new Map<string, number>();

  constructor(private readonly session: CDPSession) {
    session.on('Fetch.requestPaused', (event) => {
      const chain = event.networkId ?? event.requestId;
      const hop = event.redirectedRequestId ? (this.hops.get(chain) ?? 0) + 1 : 0;
      this.hops.set(chain, hop);
      if (hop > MAX_REDIRECTS) {
        this.refused ??= event.request.url;
        void session.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' }).catch(() => undefined);
      } else {
        void session.send('Fetch.continueRequest', { requestId: event.requestId }).catch(() => undefined);
      }
    });
  }

  static async install(page: Page): Promise<RedirectCap> {
    const session = await page.context().newCDPSession(page);
    const cap = new RedirectCap(session);
    pageSessions.set(page, session);
    await session.send('Fetch.enable', { patterns: [{ urlPattern: '*', resourceType: 'Document', requestStage: 'Request' }] });
    return cap;
  }

  reset(): void {
    this.refused = undefined;
    this.hops.clear();
  }
}

const redirectCaps = new WeakMap<Page, RedirectCap>();
// Each page's own CDP session (the one its RedirectCap listens on), for what Playwright has no call for.
const pageSessions = new WeakMap<Page, CDPSession>();

/**
 * The most a rendered page may serialise to (UTF-16 code units, what `outerHTML.length` counts):
 * past it the page is refused (body_too_large) before its HTML comes to this process. A script
 * builds a DOM of hundreds of megabytes in a second, well within the render's time, and its
 * serialisation arrived whole, as one protocol message, on the service's heap (every tenant's
 * fetches lost with it). Far above real pages, whose rendered HTML is a few MB at most.
 */
export const MAX_RENDERED_HTML_CHARS = 16 * 1024 * 1024;

/**
 * How long the page's HTML is, counted in a world of its own (CDP's isolated world, as
 * Playwright's `content()` serialises in its utility world): the page's scripts cannot change
 * what `outerHTML` or XMLSerializer answer there. Undefined when the page cannot be asked (no
 * session, a navigation in between): `content()` then runs as before.
 */
async function renderedLength(page: Page): Promise<number | undefined> {
  const session = pageSessions.get(page);
  if (!session) return undefined;
  try {
    const { frameTree } = await session.send('Page.getFrameTree');
    const { executionContextId } = await session.send('Page.createIsolatedWorld', { frameId: frameTree.frame.id, worldName: 'drael-size' });
    const { result } = await session.send('Runtime.evaluate', {
      expression:
        '(document.doctype ? new XMLSerializer().serializeToString(document.doctype).length : 0) + (document.documentElement ? document.documentElement.outerHTML.length : 0)',
      contextId: executionContextId,
      returnByValue: true,
    });
    return typeof result.value === 'number' ? result.value : undefined;
  } catch {
    return undefined;
  }
}

interface Lease {
  page: Page;
  done(healthy: boolean): void;
}

/** Why a render was stopped for the browser process's memory: its own stored data, or not known whose. */
type StopReason = 'storage' | 'shared';

interface InFlightRender {
  page: Page;
  /** Closes its page: the render answers as `why` says. */
  stop(why: StopReason): void;
}

/** What the page's own site has stored in its context (Cache Storage, IndexedDB, ...), in bytes; undefined when it cannot be asked. */
async function storedBytes(page: Page): Promise<number | undefined> {
  const session = pageSessions.get(page);
  let origin: string;
  try {
    origin = new URL(page.url()).origin;
  } catch {
    return undefined;
  }
  if (!session || origin === 'null') return undefined;
  try {
    return (await session.send('Storage.getUsageAndQuota', { origin })).usage;
  } catch {
    return undefined;
  }
}

/**
 * The browser path, and the only file that knows Playwright. One Chromium, a bounded number
 * of pages at once, and contexts that are never shared between tenants: a request naming a
 * tenant reuses that tenant's own context (its warm page makes the fast path), a request
 * without one gets a fresh context that is closed after it. Spare contexts are made ahead so
 * neither waits for Chromium to spawn a renderer. Every byte the browser sends leaves through the filtering
 * proxy: Chromium is told to use it for all schemes with no loopback bypass, QUIC and
 * non-proxied WebRTC are off.
 */
export class BrowserPool {
  private browser: Promise<Browser> | undefined;
  private readonly spares: Promise<BrowserContext>[] = [];
  /**
   * The pages, shared fairly between tenants (issue F8, as the sandbox's run slots: one tenant's
   * burst of renders took every page and an unbounded queue, and a waiter whose caller had given
   * up still rendered later, for nobody). packages/fair-slots holds the rule.
   */
  private readonly slots: FairSlots;
  private closed = false;
  private readonly tenants = new Map<string, TenantContext>();
  /** The browser's own DevTools session (which renderers there are), opened with each launch. */
  private browserSession: Promise<CDPSession> | undefined;
  private readonly memory: BrowserMemoryWatch;
  /** The renders in flight, each with the way to stop it (BrowserMemoryWatch's browser-process bound). */
  private readonly inFlight = new Set<InFlightRender>();

  constructor(
    private readonly proxy: FilteringProxy,
    private readonly proxyPort: Promise<number>,
    private readonly options: BrowserPoolOptions,
  ) {
    this.slots = new FairSlots(options.slots, busy);
    this.memory = new BrowserMemoryWatch(() => this.chromiumProcesses(), options.rendererMaxBytes, options.rendererMaxBytes * options.slots.max, {
      rendererKilled: () => recordMemoryStop('renderer'),
      browserOver: () => this.stopStorageHogs(),
    });
    watchBrowser(() => {
      const { active, queued, queueMax } = this.slots.stats;
      return { active, queued, queueMax, spare: this.spares.length, tenant: this.tenants.size };
    });
  }

  /** Launches Chromium and fills the spare contexts (called at boot and lazily). */
  async warm(): Promise<void> {
    await this.launch();
    this.refill();
    await Promise.all(this.spares);
  }

  /** Health: Chromium is launched and its connection is up (launches it if it is not yet). */
  async check(): Promise<void> {
    if (this.closed) throw new Error('browser pool closed');
    const browser = await this.launch();
    if (!browser.isConnected()) throw new Error('Chromium disconnected');
  }

  /**
   * Renders one page. With a tenant, that tenant's own context (and warm page) is reused, so
   * nothing is shared across tenants; without one, a fresh context is used once and closed.
   * The render waits for a page within its tenant's share; it is refused `fetch_busy` past the
   * share or the queue's bound, and leaves the queue unrendered when `signal` aborts or `deadline`
   * (epoch ms: when its caller stops waiting) passes first.
   */
  async render(url: string, options: { tenant?: string; signal?: AbortSignal; deadline?: number } = {}): Promise<RenderedPage> {
    const { signal } = options;
    if (this.closed) throw fetchError('browser_unavailable', 'browser is shutting down', {}, true);
    const release = await this.acquire(options.tenant ?? ANONYMOUS_TENANT, signal, options.deadline);
    const started = Date.now();
    this.memory.renderStarted();
    let lease: Lease | undefined;
    let healthy = false;
    let cap: RedirectCap | undefined;
    // The page's renderer died (killed for its memory, or on its own): nothing more can be read from it.
    let crashed = false;
    // Stopped for the browser process's memory (stopStorageHogs): its storage, or not known whose.
    let stoppedFor: StopReason | undefined;
    let flight: InFlightRender | undefined;
    try {
      // Given up between the grant and here: nothing is loaded for a caller who has left.
      if (signal?.aborted) throw givenUp(url);
      lease = await this.lease(options.tenant);
      const page = lease.page;
      flight = {
        page,
        stop: (why) => {
          stoppedFor ??= why;
          void page.close().catch(() => undefined);
        },
      };
      this.inFlight.add(flight);
      cap = redirectCaps.get(page);
      cap?.reset();
      const onAbort = () => void page.close().catch(() => undefined);
      signal?.addEventListener('abort', onAbort, { once: true });
      // An abort while the context was being made fired no listener.
      if (signal?.aborted) throw givenUp(url);
      // The last main-frame document wins: a challenge page that reloads itself ends on the real one.
      let last: Response | null = null;
      const onResponse = (r: Response) => {
        if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) last = r;
      };
      page.on('response', onResponse);
      const onCrash = () => {
        crashed = true;
      };
      page.once('crash', onCrash);
      const network = new NetworkActivity(page);
      try {
        let first: Response | null;
        try {
          first = await page.goto(url, { waitUntil: 'load', timeout: this.options.timeoutMs });
        } catch (err) {
          if (cap?.refused) throw fetchError('too_many_redirects', `more than ${MAX_REDIRECTS} redirects (stopped before ${cap.refused})`, { url });
          throw this.navigationError(err, url, started, signal);
        }
        if (!first) throw fetchError('upstream_error', 'browser got no response', { url });
        let redirects = 0;
        for (let r = first.request().redirectedFrom(); r; r = r.redirectedFrom()) redirects++;
        // spec 04: at most 3 redirects, on this path as on the HTTP one. RedirectCap stops the
        // chain before the hop past the limit; this is the check should a page lack its cap.
        if (redirects > MAX_REDIRECTS) throw fetchError('too_many_redirects', `more than ${MAX_REDIRECTS} redirects`, { url });
        const early = (last as Response | null) ?? first;
        // An ordinary error page is not waited on; a challenge page (403/429/503) may reload itself.
        const status = early.status();
        if (!early.headers()[BLOCKED_HEADER] && (status < 400 || status === 403 || status === 429 || status === 503))
          await this.settle(page, network, () => !crashed && stoppedFor === undefined);
        const response: Response = (last as Response | null) ?? first;
        const blockedRange = response.headers()[BLOCKED_HEADER];
        if (blockedRange) {
          throw blocked(response.url(), new URL(response.url()).hostname, blockedRange);
        }
        const mime = (response.headers()['content-type'] ?? 'text/html').split(';')[0]!.trim().toLowerCase();
        await inlineHiddenText(page);
        const length = await renderedLength(page);
        // Here as well as below: a frame's renderer killed leaves the main frame answering, so
        // nothing after this need fail for the page to be refused.
        if (crashed || stoppedFor) throw this.memoryError(url, started, stoppedFor);
        if (length !== undefined && length > MAX_RENDERED_HTML_CHARS) {
          throw fetchError('body_too_large', `the rendered page is larger than ${MAX_RENDERED_HTML_CHARS} characters`, { max_chars: MAX_RENDERED_HTML_CHARS, url });
        }
        const html = await page.content();
        // A context whose render left the browser process past its bound is not kept: what the
        // page stored (Cache Storage, IndexedDB) lives in it, and goes with it.
        healthy = !signal?.aborted && !(await this.memory.browserOver());
        return { finalUrl: page.url(), status: response.status(), mime, html };
      } finally {
        network.stop();
        page.off('response', onResponse);
        page.off('crash', onCrash);
        signal?.removeEventListener('abort', onAbort);
      }
    } catch (err) {
      // A page that crashed or was stopped (its next call failed, whatever it was) is answered for why.
      if ((crashed || stoppedFor) && !(err instanceof FetchError && err.code === 'body_too_large')) throw this.memoryError(url, started, stoppedFor);
      if (err instanceof FetchError) {
        // A chain cut by RedirectCap leaves Chromium committing an error page after goto has
        // returned, which would race the page's next navigation: that page is not reused.
        healthy = (err.code === 'blocked_address' || err.code === 'upstream_error' || err.code === 'too_many_redirects') && !cap?.refused;
        throw err;
      }
      if (signal?.aborted) throw fetchError('fetch_timeout', 'browser render timed out', { url }, true);
      throw fetchError('browser_unavailable', `browser failed: ${(err as Error).message.split('\n')[0]}`, { url }, true);
    } finally {
      if (flight) this.inFlight.delete(flight);
      this.memory.renderEnded();
      lease?.done(healthy);
      release();
      this.refill();
    }
  }

  /**
   * A render stopped for memory, or whose page crashed. Refused as too large when its page held
   * more than the bound: its renderer was killed for its memory during this render
   * (BrowserMemoryWatch), or its stored data put the browser process past it (stopStorageHogs).
   * Otherwise the browser's failure, retryable: a render stopped with the others when the browser
   * process's memory could not be told apart, or a tab that crashed on its own. Two renders at once
   * whose pages crash together, one of them on its own, may both read as the first.
   */
  private memoryError(url: string, started: number, stoppedFor: StopReason | undefined): FetchError {
    const maxMb = Math.round(this.memory.limitBytes / (1024 * 1024));
    if (stoppedFor === 'storage') {
      return fetchError('body_too_large', `the page stored more than ${Math.round(maxMb / 4)} MB in the browser while it rendered (the browser held more than ${maxMb} MB)`, {
        max_memory_mb: maxMb,
        url,
      });
    }
    if (stoppedFor === 'shared') {
      return fetchError(
        'browser_unavailable',
        `the browser held more than ${maxMb} MB for the pages rendering and could not tell whose: this render was stopped with the others; retry`,
        { url },
        true,
      );
    }
    if (this.memory.killedSince(started)) {
      return fetchError('body_too_large', `the page used more than ${maxMb} MB of memory while it rendered`, { max_memory_mb: maxMb, url });
    }
    return fetchError('browser_unavailable', 'the browser tab rendering the page crashed', { url }, true);
  }

  /**
   * The browser process holds more than the bound while pages render: data the pages stored (an
   * off-the-record context keeps Cache Storage and IndexedDB in its memory). The renders whose own
   * site stored more than a quarter of the bound are stopped (refused body_too_large) and their
   * contexts closed, which frees what they stored. Failing that (data stored by a frame of another
   * site, or by a render already over), the contexts kept for idle tenants are closed (they lose
   * only their cookies); failing that too, every render in flight is stopped, retryable.
   */
  private async stopStorageHogs(): Promise<void> {
    const renders = [...this.inFlight];
    const stored = await Promise.all(renders.map((r) => storedBytes(r.page)));
    const culprits = renders.filter((_, i) => (stored[i] ?? 0) > this.memory.limitBytes / 4);
    if (culprits.length > 0) {
      for (const r of culprits) r.stop('storage');
      recordMemoryStop('storage');
      return;
    }
    if (this.closeIdleTenants(0) > 0) {
      recordMemoryStop('idle');
      return;
    }
    for (const r of renders) r.stop('shared');
    if (renders.length > 0) recordMemoryStop('shared');
  }

  /** Chromium's processes now (none while the browser is not up). */
  private async chromiumProcesses(): Promise<ChromiumProcess[]> {
    if (!this.browserSession) return [];
    const session = await this.browserSession;
    const { processInfo } = await session.send('SystemInfo.getProcessInfo');
    return processInfo.map((p) => ({ type: p.type, id: p.id }));
  }

  private async lease(tenant: string | undefined): Promise<Lease> {
    if (tenant !== undefined) {
      const entry = this.tenants.get(tenant);
      if (entry && !entry.busy) {
        entry.busy = true;
        // Most recently used last, so eviction takes the oldest.
        this.tenants.delete(tenant);
        this.tenants.set(tenant, entry);
        if (await entry.idle) return { page: entry.page, done: (healthy) => this.returnTenant(tenant, entry, healthy) };
        // Its page would not leave the last one: that context is gone, a new one is made below.
      }
      if (!this.tenants.has(tenant)) {
        const context = await this.takeContext();
        const created: TenantContext = { context, page: context.pages()[0] ?? (await openPage(context)), busy: true, idle: Promise.resolve(true) };
        this.tenants.set(tenant, created);
        this.closeIdleTenants(MAX_TENANT_CONTEXTS);
        return { page: created.page, done: (healthy) => this.returnTenant(tenant, created, healthy) };
      }
      // The tenant's page is in use: this request gets a context of its own for once.
    }
    const context = await this.takeContext();
    const page = context.pages()[0] ?? (await openPage(context));
    return { page, done: () => void context.close().catch(() => undefined) };
  }

  private returnTenant(tenant: string, entry: TenantContext, healthy: boolean): void {
    if (!healthy || this.closed || entry.page.isClosed()) {
      this.dropTenant(tenant, entry);
      return;
    }
    // Leave the page blank so its scripts, timers and sockets stop between requests.
    entry.idle = entry.page.goto('about:blank', { timeout: 5_000 }).then(
      () => true,
      () => {
        // It would not leave: a script that never yields (a loop started on a timer, or when the
        // page is left) holds its renderer, which went on using a core for as long as the context
        // was kept. The context goes, and its renderer with it.
        this.dropTenant(tenant, entry);
        return false;
      },
    );
    entry.busy = false;
  }

  /** Closes the contexts kept for idle tenants, oldest first, until at most `keep` contexts are kept; how many it closed. */
  private closeIdleTenants(keep: number): number {
    let closed = 0;
    for (const [tenant, entry] of this.tenants) {
      if (this.tenants.size <= keep) break;
      if (entry.busy) continue;
      this.dropTenant(tenant, entry);
      closed++;
    }
    return closed;
  }

  /** The tenant's context closed, and no longer kept for it (unless another has taken its place meanwhile). */
  private dropTenant(tenant: string, entry: TenantContext): void {
    if (this.tenants.get(tenant) === entry) this.tenants.delete(tenant);
    void entry.context.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.memory.stop();
    for (const entry of this.tenants.values()) void entry.context.close().catch(() => undefined);
    this.tenants.clear();
    const browser = this.browser;
    this.browser = undefined;
    this.browserSession = undefined;
    if (browser) await (await browser.catch(() => undefined))?.close().catch(() => undefined);
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      this.browser = this.proxyPort.then((port) =>
        chromium.launch({
          executablePath: this.options.chromiumPath,
          timeout: 30_000,
          // Chromium's own popup blocker, which Playwright turns off: without it a page opened popups
          // (window.open, a target=_blank link it clicked, a frame's window.open alike), each a page
          // of the context that nothing here reads and, for another site or without an opener, a
          // renderer of its own. And no software WebGL (Playwright turns SwiftShader on): textures a
          // page made went to the GPU process (40 of 16 MB: 674 MB there), which no bound here
          // watches, and WebGL is attack surface no page needs to be read.
          ignoreDefaultArgs: ['--disable-popup-blocking', '--enable-unsafe-swiftshader'],
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-dev-shm-usage',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--disable-quic',
            '--dns-prefetch-disable',
            '--disable-3d-apis',
            `--proxy-server=http://127.0.0.1:${port}`,
            // Chromium never sends loopback through a proxy unless told so: without this, a page
            // could reach 127.0.0.1 directly and skip the guard.
            '--proxy-bypass-list=<-loopback>',
            '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
            '--webrtc-ip-handling-policy=disable_non_proxied_udp',
          ],
        }),
      );
      this.browserSession = this.browser.then((b) => b.newBrowserCDPSession());
      this.browserSession.catch(() => undefined);
      const gone = () => {
        this.browser = undefined;
        this.browserSession = undefined;
      };
      this.browser.then((b) => b.on('disconnected', gone), gone);
    }
    return this.browser;
  }

  private async newContext(): Promise<BrowserContext> {
    const browser = await this.launch();
    const port = await this.proxyPort;
    const context = await browser.newContext({
      // The proxy wants this process's credential on every request; Playwright answers its 407.
      // The bypass list is explicit so that loopback goes through the proxy whatever the
      // environment says (Playwright adds <-loopback> only by default).
      proxy: { server: `http://127.0.0.1:${port}`, bypass: '<-loopback>', ...this.proxy.credentials },
      javaScriptEnabled: true,
      serviceWorkers: 'block',
      acceptDownloads: false,
      ignoreHTTPSErrors: false,
      viewport: { width: 1280, height: 900 },
    });
    await openPage(context);
    return context;
  }

  private async takeContext(): Promise<BrowserContext> {
    const next = this.spares.shift();
    if (next) {
      try {
        return await next;
      } catch {
        // a spare that failed to open is replaced by a fresh attempt below
      }
    }
    return this.newContext();
  }

  private refill(): void {
    if (this.closed) return;
    while (this.spares.length < this.options.spare) {
      const p = this.newContext();
      p.catch(() => undefined);
      this.spares.push(p);
    }
  }

  private async settle(page: Page, network: NetworkActivity, alive: () => boolean): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    // A request a load handler makes is reported a moment after `load`: the quiet is counted from
    // `load` at the earliest, so it is seen.
    network.touch();
    while (Date.now() < deadline && alive()) {
      if (!network.quietFor(NETWORK_QUIET_MS)) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      // Text nodes outside scripts and styles, counted only up to the threshold: innerText would
      // force a layout of the whole page on every poll.
      const chars = await page
        .evaluate((enough) => {
          const body = document.body;
          if (!body) return 0;
          const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
          let n = 0;
          for (let node = walker.nextNode(); node && n < enough; node = walker.nextNode()) {
            const tag = node.parentElement?.tagName;
            if (tag !== 'SCRIPT' && tag !== 'STYLE' && tag !== 'NOSCRIPT') n += (node.textContent ?? '').trim().length;
          }
          return n;
        }, SETTLE_TEXT_CHARS)
        .catch(() => 0);
      if (chars >= SETTLE_TEXT_CHARS) return;
      await page.waitForLoadState('load', { timeout: 250 }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private navigationError(err: unknown, url: string, started: number, signal?: AbortSignal): FetchError {
    const message = (err as Error).message ?? String(err);
    const refused = this.proxy.blockedSince(started);
    if (refused.length > 0 && /ERR_TUNNEL_CONNECTION_FAILED|ERR_PROXY|ERR_EMPTY_RESPONSE|ERR_CONNECTION/.test(message)) {
      const last = refused[refused.length - 1]!;
      return blocked(url, last.authority.replace(/:\d+$/, ''), last.range);
    }
    if (signal?.aborted || /Timeout/i.test(message)) return fetchError('fetch_timeout', 'browser render timed out', { url }, true);
    if (/ERR_TOO_MANY_REDIRECTS/.test(message)) return fetchError('too_many_redirects', 'too many redirects', { url });
    return fetchError('connection_failed', `browser could not load the page: ${message.split('\n')[0]}`, { url }, true);
  }

  /** A page slot within the tenant's share; its release. */
  private async acquire(tenant: string, signal: AbortSignal | undefined, deadline: number | undefined): Promise<() => void> {
    try {
      return await this.slots.acquire(tenant, { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) });
    } catch (err) {
      if (err instanceof FetchError) throw err;
      // The signal aborted while it waited: the request's own timeout, or its caller gave up.
      throw busy({ share: 'deadline' });
    }
  }
}

/** A render refused a page by the fair share (packages/fair-slots): retryable, nothing was loaded. */
function busy(refusal: Refusal): FetchError {
  switch (refusal.share) {
    case 'tenant':
      return fetchError(
        'fetch_busy',
        `this tenant's share of the browser is taken (${refusal.running} of its ${refusal.maxPerTenant} pages at once, ${refusal.queued} of its ${refusal.queueMaxPerTenant} waiting); retry shortly`,
        { share: 'tenant', running: refusal.running, queued: refusal.queued },
        true,
      );
    case 'replica':
      return fetchError(
        'fetch_busy',
        `the browser is at capacity (${refusal.running} pages rendering, ${refusal.queued} waiting); retry shortly`,
        { share: 'replica', running: refusal.running, queued: refusal.queued },
        true,
      );
    case 'deadline':
      return fetchError('fetch_busy', 'no browser page came free while the request still waited; the page was not loaded; retry shortly', { share: 'deadline' }, true);
  }
}

function givenUp(url: string): FetchError {
  return fetchError('fetch_timeout', 'browser render timed out', { url }, true);
}

async function openPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  redirectCaps.set(page, await RedirectCap.install(page));
  return page;
}

/**
 * The page's own requests that can bring it content (SETTLE_REQUEST_TYPES), in flight and when the
 * last one started or ended: what `settle` waits on. Listens from before navigation to the end of
 * the render.
 */
class NetworkActivity {
  private inFlight = new Set<Request>();
  private lastChange = Date.now();
  // Bound in the constructor, not made by field initialisers: V8 pretenures a closure assigned to a
  // property (eslint.config.js), and one of these is made per page.
  private readonly started: (request: Request) => void;
  private readonly ended: (request: Request) => void;

  constructor(private readonly page: Page) {
    const started = (request: Request) => {
      if (!SETTLE_REQUEST_TYPES.has(request.resourceType())) return;
      this.inFlight.add(request);
      this.lastChange = Date.now();
    };
    const ended = (request: Request) => {
      if (!this.inFlight.delete(request)) return;
      this.lastChange = Date.now();
    };
    this.started = started;
    this.ended = ended;
    page.on('request', this.started);
    page.on('requestfinished', this.ended);
    page.on('requestfailed', this.ended);
  }

  /** Counts the quiet from now. */
  touch(): void {
    this.lastChange = Date.now();
  }

  /** Nothing in flight, and nothing started or ended for `ms`. */
  quietFor(ms: number): boolean {
    return this.inFlight.size === 0 && Date.now() - this.lastChange >= ms;
  }

  stop(): void {
    this.page.off('request', this.started);
    this.page.off('requestfinished', this.ended);
    this.page.off('requestfailed', this.ended);
  }
}

// A frame's text is inlined only when it has at least this much: a frame of the page's own site
// that holds a document (a report, an article), not a widget.
const FRAME_TEXT_CHARS = 200;

/**
 * Puts text the page shows but `page.content()` leaves out where it stands in the main document:
 * open shadow roots are flattened into their hosts (each slot replaced by what it shows), and a
 * frame of the page's own site holding FRAME_TEXT_CHARS of text replaces its `<iframe>` with its
 * body. `page.content()` serialises the main frame's light DOM only, so web components' text and a
 * framed document never reached the extractor. Third-party frames (ads, players, widgets) stay
 * out. The page is navigated away afterwards, so changing its DOM costs nothing. Best effort: a
 * page that resists keeps what `content()` gives.
 */
async function inlineHiddenText(page: Page): Promise<void> {
  await page
    .evaluate(() => {
      const flatten = (root: Document | ShadowRoot) => {
        for (const host of Array.from(root.querySelectorAll('*'))) {
          const shadow = host.shadowRoot;
          if (!shadow) continue;
          flatten(shadow);
          for (const slot of Array.from(shadow.querySelectorAll('slot'))) {
            const shown = slot.assignedNodes({ flatten: true });
            slot.replaceWith(...(shown.length > 0 ? shown : Array.from(slot.childNodes)).map((n) => n.cloneNode(true)));
          }
          host.innerHTML = shadow.innerHTML;
        }
      };
      flatten(document);
    })
    .catch(() => undefined);
  const site = siteOf(page.url());
  for (const frame of page.mainFrame().childFrames()) {
    if (site === undefined || siteOf(frame.url()) !== site) continue;
    try {
      // The frame's own world answers: it could hand back a string of any size (a getter of its
      // own), so one past the page's bound stays in the browser.
      const body = await frame.evaluate(
        ([enough, most]) => {
          if ((document.body?.innerText ?? '').trim().length < enough) return undefined;
          const html: unknown = document.body.innerHTML;
          return typeof html === 'string' && html.length <= most ? html : undefined;
        },
        [FRAME_TEXT_CHARS, MAX_RENDERED_HTML_CHARS] as const,
      );
      if (body === undefined) continue;
      const element = await frame.frameElement();
      await element.evaluate((iframe, html) => {
        const inlined = document.createElement('div');
        inlined.innerHTML = html;
        (iframe as Element).replaceWith(inlined);
      }, body);
    } catch {
      // A frame that navigated or closed meanwhile: left as it was.
    }
  }
}

/** The host without its first label when it has three or more ("www.x.org", "docs.x.org" → "x.org"): frames of one site. */
function siteOf(url: string): string | undefined {
  try {
    const { protocol, hostname } = new URL(url);
    if (protocol !== 'http:' && protocol !== 'https:') return undefined;
    const labels = hostname.split('.');
    return labels.length >= 3 && !/^\d+$/.test(labels[labels.length - 1]!) ? labels.slice(1).join('.') : hostname;
  } catch {
    return undefined;
  }
}
