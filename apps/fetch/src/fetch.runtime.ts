import { tenantShareOf } from '@drael/fair-slots';
import type { Logger } from '@drael/logger';
import { BrowserPool } from './browser/browser-pool.js';
import { FilteringProxy } from './browser/filtering-proxy.js';
import { RedisPageCache, type PageCache } from './cache/page-cache.js';
import type { FetchConfig } from './config/config.schema.js';
import { ExtractionPool } from './extract/extraction-pool.js';
import { AddressPolicy } from './guard/address-policy.js';
import { GuardedDialer } from './guard/guarded-dialer.js';
import { systemResolver, type Resolver } from './guard/resolver.js';
import { CONNECT_TIMEOUT_MS, FETCH_TIMEOUT_MS, HttpFetcher, MAX_BODY_BYTES, MAX_REDIRECTS, type HttpFetchLimits } from './http/http-fetcher.js';
import { Socks5hDialer } from './onion/socks5h.dialer.js';
import { FetchPageService } from './page/fetch-page.service.js';

export type FetchRuntimeConfig = Pick<
  FetchConfig,
  | 'REDIS_URL'
  | 'FETCH_CACHE_PREFIX'
  | 'TOR_SOCKS_URL'
  | 'CHROMIUM_PATH'
  | 'FETCH_BROWSER_CONCURRENCY'
  | 'FETCH_BROWSER_MAX_QUEUE'
  | 'FETCH_BROWSER_CONCURRENCY_PER_TENANT'
  | 'FETCH_BROWSER_MAX_QUEUE_PER_TENANT'
  | 'FETCH_BROWSER_SPARE'
  | 'FETCH_RENDERER_MAX_MB'
  | 'FETCH_BROWSER'
  | 'FETCH_TEST_ALLOW_CIDRS'
  | 'FETCH_EXTRACT_THREADS'
  | 'FETCH_EXTRACT_MAX_QUEUE'
  | 'FETCH_EXTRACT_THREADS_PER_TENANT'
  | 'FETCH_EXTRACT_MAX_QUEUE_PER_TENANT'
  | 'FETCH_EXTRACT_TIMEOUT_MS'
>;

export interface FetchRuntimeOverrides {
  /** Stands in for this host's resolver (tests: rebinding, proof that .onion never reaches it). */
  resolver?: Resolver;
  /** Off: no cache at all (tests that count upstream hits). */
  cache?: boolean;
  /** Tighter limits for tests of the limits themselves (a 10 s timeout is slow to watch). */
  httpLimits?: Partial<HttpFetchLimits>;
}

/**
 * Every part of the fetch service, wired once. The Nest module and the in-process tests and
 * benchmarks build the same object, so what they exercise is what production runs.
 */
export class FetchRuntime {
  readonly policy: AddressPolicy;
  readonly dialer: GuardedDialer;
  readonly http: HttpFetcher;
  readonly proxy: FilteringProxy | undefined;
  readonly browser: BrowserPool | undefined;
  readonly cache: PageCache | undefined;
  readonly reader: ExtractionPool;
  readonly pages: FetchPageService;

  constructor(config: FetchRuntimeConfig, logger: Pick<Logger, 'warn' | 'info'>, overrides: FetchRuntimeOverrides = {}) {
    this.policy = AddressPolicy.fromConfig(config.FETCH_TEST_ALLOW_CIDRS);
    if (this.policy.hasTestAllowances) {
      logger.warn({ cidrs: config.FETCH_TEST_ALLOW_CIDRS }, 'FETCH_TEST_ALLOW_CIDRS is set: the SSRF guard lets these ranges through (tests only)');
    }
    const tor = config.TOR_SOCKS_URL ? Socks5hDialer.fromUrl(config.TOR_SOCKS_URL) : undefined;
    this.dialer = new GuardedDialer(this.policy, overrides.resolver ?? systemResolver, tor, CONNECT_TIMEOUT_MS, FETCH_TIMEOUT_MS);
    this.reader = new ExtractionPool({
      slots: tenantShareOf({
        max: config.FETCH_EXTRACT_THREADS,
        queueMax: config.FETCH_EXTRACT_MAX_QUEUE,
        maxPerTenant: config.FETCH_EXTRACT_THREADS_PER_TENANT,
        queueMaxPerTenant: config.FETCH_EXTRACT_MAX_QUEUE_PER_TENANT,
      }),
      timeoutMs: config.FETCH_EXTRACT_TIMEOUT_MS,
    });
    this.http = new HttpFetcher(
      this.dialer,
      this.policy,
      { timeoutMs: FETCH_TIMEOUT_MS, maxBodyBytes: MAX_BODY_BYTES, maxRedirects: MAX_REDIRECTS, ...overrides.httpLimits },
      (sample, page) => this.reader.detectEncoding(sample, page),
    );
    if (config.FETCH_BROWSER === 'on') {
      this.proxy = new FilteringProxy(this.dialer);
      const port = this.proxy.start();
      this.browser = new BrowserPool(this.proxy, port, {
        chromiumPath: config.CHROMIUM_PATH,
        // A tenant's share of the pages and of the queue: half and a quarter unless configured.
        slots: tenantShareOf({
          max: config.FETCH_BROWSER_CONCURRENCY,
          queueMax: config.FETCH_BROWSER_MAX_QUEUE,
          maxPerTenant: config.FETCH_BROWSER_CONCURRENCY_PER_TENANT,
          queueMaxPerTenant: config.FETCH_BROWSER_MAX_QUEUE_PER_TENANT,
        }),
        spare: config.FETCH_BROWSER_SPARE,
        timeoutMs: FETCH_TIMEOUT_MS,
        rendererMaxBytes: config.FETCH_RENDERER_MAX_MB * 1024 * 1024,
      });
    }
    this.cache = overrides.cache === false ? undefined : new RedisPageCache(config.REDIS_URL, config.FETCH_CACHE_PREFIX, logger);
    this.pages = new FetchPageService(this.policy, this.http, this.browser, this.reader, this.cache);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.browser?.close(), this.http.close(), this.cache?.close(), this.reader.close()]);
    await this.proxy?.close();
  }
}
