import { DEFAULT_SEARCH_LIMIT, type SearchQueryReply, type SearchQueryRequest, type SearchResult } from '@drael/contracts';
import type { Logger } from '@drael/logger';
import { SearxUnreachableError, type SearxClient, type SearxEngineInfo } from '../searx/searx.client.js';
import { isOnionUrl, toResult } from './searx-result.mapper.js';
import type { CacheEntry, CachedSearch, SearchCache, SearchCacheKey } from '../cache/search-cache.js';
import type { SnippetVerifier } from '../verify/snippet-verifier.js';
import { classifyIntent } from '../intent/intent.classifier.js';
import { measureQuery, recordCacheLookup, recordEngineFailures, recordSearxLatency } from '../search.metrics.js';
import { SearchError } from '../search-error.js';

export interface SearchServiceOptions {
  onionEngines: readonly string[];
  /** Undefined: verification is off in this deployment, every result says verified:false. */
  verifier?: SnippetVerifier;
}

type Failure = Extract<SearchQueryReply, { ok: false }>;

/** Filled in by ask() when SearXNG was asked: how long it took (request sent to body read). */
interface SearxTiming {
  searxMs?: number;
}

/**
 * The rules of search: which engines to ask, how "empty", "failed" and "degraded" differ, onion
 * pinning, the cut to the limit, verification and the cache. SearXNG, Redis and the fetch service
 * sit behind SearxClient, SearchCache and SnippetVerifier.
 */
export class SearchService {
  constructor(
    private readonly searx: SearxClient,
    private readonly cache: SearchCache,
    private readonly options: SearchServiceOptions,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  search(req: SearchQueryRequest): Promise<SearchQueryReply> {
    return measureQuery(() => this.answer(req));
  }

  private async answer(req: SearchQueryRequest): Promise<SearchQueryReply> {
    const started = performance.now();
    const tookMs = () => Math.round((performance.now() - started) * 100) / 100;
    const onion = req.onion ?? false;
    // Onion search without a pinned engine is refused before anything else: never the clear web instead.
    if (onion && this.options.onionEngines.length === 0) {
      throw new SearchError('onion_search_unavailable', 'onion search is not configured: no hidden-service engine is pinned (SEARCH_ONION_ENGINES)', false);
    }
    const verify = (req.verify ?? true) && this.options.verifier !== undefined;
    const key: SearchCacheKey = {
      query: req.query,
      limit: req.limit ?? DEFAULT_SEARCH_LIMIT,
      onion,
      freshness: req.freshness ?? null,
      language: req.language ?? null,
      verify,
    };

    const found = this.cacheGet(key);
    const hit = found instanceof Promise ? await found : found;
    recordCacheLookup(hit !== undefined);
    if (hit) {
      const ttlMs = hit.expiresAt - Date.now();
      return { ...hit.value, took_ms: tookMs(), cached: true, ...(ttlMs > 0 ? { cache_ttl_ms: ttlMs } : {}) };
    }

    const timing: SearxTiming = {};
    const answer = await this.ask(req, key, onion, timing);
    if (!answer.ok) return { ...answer, took_ms: tookMs() };
    // Not part of the cached answer: a cache hit did not ask SearXNG.
    const searx = timing.searxMs === undefined ? {} : { searx_ms: timing.searxMs };
    // ok:false is never cached (above); an empty answer is a true answer and is.
    const ttlMs = this.cache.ttlMs;
    if (ttlMs === 0) return { ...answer, took_ms: tookMs(), cached: false, ...searx };
    const entry = { value: answer, expiresAt: Date.now() + ttlMs };
    // The write runs after the reply has left: the reply does not depend on it. This replica's
    // memory has the entry from the next turn of the loop; the shared copy follows a moment later
    // (SearchCache.set).
    setImmediate(() => void this.cacheSet(key, entry));
    return { ...answer, took_ms: tookMs(), cached: false, cache_ttl_ms: ttlMs, ...searx };
  }

  private async ask(req: SearchQueryRequest, key: SearchCacheKey, onion: boolean, timing: SearxTiming): Promise<CachedSearch | Omit<Failure, 'took_ms'>> {
    let engines: SearxEngineInfo[];
    try {
      // The list in hand comes without a wait (SearxClient.engines): SearXNG is asked in this turn.
      const listed = this.searx.engines();
      engines = listed instanceof Promise ? await listed : listed;
    } catch (err) {
      return unreachable(err);
    }
    const queried = this.enginesToAsk(engines, onion, key.freshness !== null);
    if (queried.length === 0) {
      return {
        ok: false,
        code: 'no_engines',
        reason: key.freshness ? `no enabled engine supports freshness "${key.freshness}"` : 'SearXNG has no enabled general engine',
        degraded: [],
        sources_tried: [],
      };
    }

    const asking = this.searx.search({
      query: req.query,
      engines: onion ? queried : undefined,
      freshness: req.freshness,
      language: req.language,
    });
    // The query's intent depends on the query alone: worked out while SearXNG searches, not after.
    const intent = classifyIntent(req.query);
    let answer;
    try {
      answer = await asking;
    } catch (err) {
      return unreachable(err, queried);
    }
    timing.searxMs = answer.searxMs;
    recordSearxLatency(timing.searxMs);

    const askedEngines = new Set(queried);
    const failed = [...new Set(answer.unresponsive.map((u) => u.engine).filter((e) => askedEngines.has(e)))];
    recordEngineFailures(failed);
    if (failed.length === queried.length) {
      const why = answer.unresponsive.filter((u) => askedEngines.has(u.engine)).map((u) => `${u.engine}: ${u.reason}`);
      return { ok: false, code: 'all_engines_failed', reason: `every engine failed (${why.join('; ')})`, degraded: failed, sources_tried: queried };
    }

    // Without verification the first `limit` usable results are the answer: the rest of SearXNG's
    // (a real instance gives 20-40) are never checked or mapped. Verification may drop some, so it
    // gets them all.
    const wanted = key.verify && this.options.verifier ? Number.POSITIVE_INFINITY : key.limit;
    const candidates: SearchResult[] = [];
    for (const r of answer.results) {
      const result = toResult(r, askedEngines);
      if (result !== null && (!onion || isOnionUrl(result.url))) candidates.push(result);
      if (candidates.length >= wanted) break;
    }
    const results = await this.verifyAndCut(candidates, key.limit, key.verify);
    const coverage = Math.round(((queried.length - failed.length) / queried.length) * 1000) / 1000;
    const base = {
      ok: true as const,
      degraded: failed,
      coverage,
      sources_tried: queried,
      intent,
    };
    if (results.length === 0) {
      const answered = queried.length - failed.length;
      return {
        ...base,
        found: false,
        results: [],
        note:
          failed.length === 0
            ? `all ${answered} engine(s) were queried and answered; the corpus holds nothing for this query`
            : `${answered} of ${queried.length} engine(s) answered with nothing for this query; ${failed.join(', ')} failed`,
      };
    }
    return { ...base, found: true, results };
  }

  /** Onion: the pinned engines SearXNG has (never a fall-back). Clear web: every enabled general engine. */
  private enginesToAsk(engines: SearxEngineInfo[], onion: boolean, needsTimeRange: boolean): string[] {
    // SearXNG skips an engine without time-range support whenever a time range is asked for.
    const usable = engines.filter((e) => e.enabled && (!needsTimeRange || e.time_range_support));
    if (onion) {
      const loaded = new Set(engines.filter((e) => e.enabled).map((e) => e.name));
      const pinned = this.options.onionEngines.filter((name) => loaded.has(name));
      if (pinned.length === 0) {
        // SearXNG answers an unknown engine name with its general engines, silently: refuse instead.
        throw new SearchError('onion_search_unavailable', `none of the pinned onion engines (${this.options.onionEngines.join(', ')}) is enabled in SearXNG`, false);
      }
      return pinned.filter((name) => usable.some((e) => e.name === name));
    }
    const onionNames = new Set(this.options.onionEngines);
    return usable.filter((e) => e.categories.includes('general') && !onionNames.has(e.name)).map((e) => e.name);
  }

  /**
   * Without verification: the first `limit` results, each verified:false. With it: results in
   * SearXNG's order, a result whose snippet is absent from its live page is dropped (and the next
   * one moves up), a result whose page could not be read in time is kept as verified:false.
   */
  private async verifyAndCut(candidates: SearchResult[], limit: number, verify: boolean): Promise<SearchResult[]> {
    if (!verify || !this.options.verifier) return candidates.slice(0, limit);
    const verdicts = await this.options.verifier.verify(candidates, limit);
    return candidates
      .map((r, i) => ({ ...r, verified: verdicts[i] === 'present', drop: verdicts[i] === 'absent' }))
      .filter((r) => !r.drop)
      .slice(0, limit)
      .map(({ drop: _drop, ...r }) => r);
  }

  /** A promise only when Redis is asked (SearchCache.get); a cache that fails is a miss. */
  private cacheGet(key: SearchCacheKey): CacheEntry | undefined | Promise<CacheEntry | undefined> {
    const down = (err: unknown) => {
      this.logger.warn({ err }, 'search cache unavailable; searching uncached');
      return undefined;
    };
    try {
      const found = this.cache.get(key);
      return found instanceof Promise ? found.catch(down) : found;
    } catch (err) {
      return down(err);
    }
  }

  private async cacheSet(key: SearchCacheKey, entry: CacheEntry): Promise<void> {
    try {
      await this.cache.set(key, entry);
    } catch (err) {
      this.logger.warn({ err }, 'search cache unavailable; answer not cached');
    }
  }
}

function unreachable(err: unknown, queried: string[] = []): Omit<Failure, 'took_ms'> {
  if (!(err instanceof SearxUnreachableError)) throw err;
  return { ok: false, code: 'searx_unreachable', reason: err.message, degraded: [], sources_tried: queried };
}
