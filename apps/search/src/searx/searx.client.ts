import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { z } from 'zod';
import type { Freshness } from '@drael/contracts';
import { compiledCheck } from '@drael/schema-check';

// SearXNG's answers are checked by validators compiled from these schemas (compiled-check.ts): they
// are loose (SearXNG's other fields are kept, never read) and have no defaults, so that a valid
// answer is taken as it is. The mapper fills what is missing.

/** One result as SearXNG's JSON format gives it (only the fields Drael reads). */
const SearxResultSchema = z.looseObject({
  url: z.string(),
  title: z.string().optional(),
  content: z.string().nullish(),
  engine: z.string().optional(),
  engines: z.array(z.string()).optional(),
  // Debian searx 1.1: `pubdate` "2026-11-28 12:24:01+0000" and a human `publishedDate`;
  // SearXNG: ISO `publishedDate`. Either may be missing or null.
  pubdate: z.string().nullish(),
  publishedDate: z.string().nullish(),
});
const SearxAnswerSchema = z.looseObject({
  results: z.array(z.unknown()),
  // [[engine, reason], ...]
  unresponsive_engines: z.array(z.tuple([z.string(), z.string()]).rest(z.unknown())).optional(),
});
const checkResult = compiledCheck(SearxResultSchema);
const checkAnswer = compiledCheck(SearxAnswerSchema);
const SearxConfigSchema = z.object({
  engines: z.array(
    z.object({
      name: z.string(),
      categories: z.array(z.string()),
      enabled: z.boolean(),
      time_range_support: z.boolean().default(false),
    }),
  ),
});

export type SearxResult = z.infer<typeof SearxResultSchema>;
export type SearxEngineInfo = z.infer<typeof SearxConfigSchema>['engines'][number];
export interface SearxAnswer {
  /**
   * SearXNG's results in its order, each checked when it is reached (one that does not match the
   * schema is skipped): a caller that needs the first ten of forty checks ten.
   */
  results: Iterable<SearxResult>;
  unresponsive: { engine: string; reason: string }[];
  /**
   * How long SearXNG took: from the request's start to its body's last byte, in ms. Parsing and
   * checking the body are Drael's own time and are not in it (the search.query.v1 reply's
   * `searx_ms`, and the gateway's Server-Timing, tell SearXNG's share from Drael's).
   */
  searxMs: number;
}

export interface SearxQuery {
  query: string;
  /** Ask these engines by name; else the `general` category. */
  engines?: readonly string[];
  freshness?: Freshness;
  language?: string;
}

/** Each raw result that matches the schema, checked as the caller reaches it. */
function* checkedResults(raw: readonly unknown[]): Generator<SearxResult> {
  for (const item of raw) {
    const r = checkResult.safeParse(item);
    if (r.success) yield r.data;
  }
}

/** SearXNG could not be asked or gave no usable answer (network, status, body). */
export class SearxUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearxUnreachableError';
  }
}

// The engine list changes only when SearXNG's settings do; asking /config on every query would
// double the calls to SearXNG. Past this age the list is still used once more while a fresh one
// is fetched beside it, so no search waits for /config after the first.
const ENGINE_LIST_TTL_MS = 30_000;
// The most of an answer read: a page of results is tens of kilobytes, and SearXNG relays what its
// engines send. Past it the answer is dropped and the search fails as SearXNG's fault.
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** The engine list and when it was fetched: `inHand` once it has arrived. */
interface EngineList {
  at: number;
  engines: Promise<SearxEngineInfo[]>;
  inHand?: SearxEngineInfo[];
}

/** The one place that speaks SearXNG's HTTP API (`/search?format=json`, `/config`). */
export class SearxClient {
  private engineList?: EngineList;
  private refreshing?: Promise<unknown>;
  // Sockets are kept for the next search where SearXNG allows it (the Debian searx closes them).
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });

  /** SearXNG's origin and base path, as request options; only the path changes per call. */
  private readonly base: URL;
  private readonly requestOptions: http.RequestOptions;

  constructor(
    baseUrl: string,
    private readonly timeoutMs: number,
    private readonly engineListTtlMs = ENGINE_LIST_TTL_MS,
  ) {
    this.base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    const isHttps = this.base.protocol === 'https:';
    // Built once: a URL handed to http.request is turned into these options on every call, and
    // that conversion and the URL building cost ~0.1 ms per search on the path before the request
    // leaves (cold, after the idle wait; interleaved A/B, bench/search/README.md).
    const { protocol, hostname, port, auth } = urlToHttpOptions(this.base);
    this.requestOptions = {
      protocol,
      hostname,
      ...(port !== undefined ? { port } : {}),
      ...(auth !== undefined ? { auth } : {}),
      agent: isHttps ? this.httpsAgent : this.httpAgent,
      headers: { accept: 'application/json' },
    };
  }

  async search(q: SearxQuery): Promise<SearxAnswer> {
    const params = new URLSearchParams({ q: q.query, format: 'json' });
    if (q.engines?.length) params.set('engines', q.engines.join(','));
    else params.set('categories', 'general');
    // SearXNG's time_range takes the same four words as Drael's freshness.
    if (q.freshness) params.set('time_range', q.freshness);
    if (q.language) params.set('language', q.language);
    const started = performance.now();
    const { body, readAt } = await this.getJson(`search?${params.toString()}`);
    const answer = checkAnswer.safeParse(body);
    if (!answer.success) throw new SearxUnreachableError('SearXNG answered JSON of an unexpected shape');
    return {
      results: checkedResults(answer.data.results),
      unresponsive: (answer.data.unresponsive_engines ?? []).map(([engine, reason]) => ({ engine, reason })),
      searxMs: Math.round((readAt - started) * 100) / 100,
    };
  }

  /**
   * Engines SearXNG has loaded (name, categories, enabled, time-range support). Fetched on first
   * use; once older than the TTL, the list in hand answers while one refresh runs beside it. The
   * list in hand is returned as it is, not in a promise: a search then asks SearXNG in the same
   * turn of the loop as it arrived, and the work queued behind it (the reply's bookkeeping, the
   * next message) runs while SearXNG searches, not before the request leaves.
   */
  engines(): SearxEngineInfo[] | Promise<SearxEngineInfo[]> {
    const list = this.engineList;
    if (!list) {
      const entry: EngineList = { at: Date.now(), engines: this.fetchEngines() };
      this.engineList = entry;
      entry.engines.then(
        (engines) => {
          entry.inHand = engines;
        },
        // A failed first look-up is not remembered: the next search asks again.
        () => {
          if (this.engineList === entry) this.engineList = undefined;
        },
      );
      return entry.engines;
    }
    if (Date.now() - list.at > this.engineListTtlMs && !this.refreshing) {
      // A failed refresh keeps the list in hand; the next search tries again.
      this.refreshing = this.fetchEngines()
        .then(
          (engines) => {
            this.engineList = { at: Date.now(), engines: Promise.resolve(engines), inHand: engines };
          },
          () => undefined,
        )
        .finally(() => {
          this.refreshing = undefined;
        });
    }
    return list.inHand ?? list.engines;
  }

  /** Health: SearXNG answers its JSON API (`/config`, the cheapest JSON route it has). */
  async ping(): Promise<void> {
    await this.fetchEngines();
  }

  private async fetchEngines(): Promise<SearxEngineInfo[]> {
    const { body } = await this.getJson('config');
    const parsed = SearxConfigSchema.safeParse(body);
    if (!parsed.success) throw new SearxUnreachableError('SearXNG /config answered an unexpected shape');
    return parsed.data.engines;
  }

  /**
   * GET `relativePath` under SearXNG's base URL, parse its JSON. Through node:http rather than
   * undici: per call undici's request() cost this process about 1.2 ms more CPU than node:http (2.5–2.9 ms against 1.4–1.6 ms, JSON
   * parse included, against the local searx; bench/search/README.md), much of it on the search's
   * path, and an Error with a stack trace for every connection the server closes (searx answers
   * HTTP/1.0, `Connection: close`). Keep-alive is used where SearXNG offers it.
   */
  private getJson(relativePath: string): Promise<{ body: unknown; readAt: number }> {
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const options = { ...this.requestOptions, path: `${this.base.pathname}${relativePath}` };
      const req = (this.base.protocol === 'https:' ? https : http).request(options);
      // One deadline for the whole exchange: connect, headers and body.
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy();
      }, this.timeoutMs);
      const fail = (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof SearxUnreachableError ? err : this.unreachable(err, timedOut));
      };
      req.on('error', fail);
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299) {
          res.resume();
          fail(new SearxUnreachableError(`SearXNG answered HTTP ${status}${status === 403 ? ' (is the json format enabled?)' : ''}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= MAX_ANSWER_BYTES) return void chunks.push(c);
          // Held whole and parsed on the loop: 200 MB took 2.5 s of it and 736 MB of memory. Failed
          // before the socket is let go, whose own error would otherwise answer first.
          fail(new SearxUnreachableError(`SearXNG answered more than ${MAX_ANSWER_BYTES} bytes`));
          res.destroy();
        });
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('the answer was cut off')));
        res.on('end', () => {
          const readAt = performance.now();
          clearTimeout(timer);
          if (timedOut) return;
          try {
            // Most answers come in one chunk: no copy into a new buffer for those.
            const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
            resolve({ body: JSON.parse(text) as unknown, readAt });
          } catch {
            reject(new SearxUnreachableError('SearXNG answered something that is not JSON'));
          }
        });
      });
      req.end();
    });
  }

  private unreachable(err: unknown, timedOut: boolean): SearxUnreachableError {
    const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
    const why = timedOut ? `no answer within ${this.timeoutMs} ms` : (e.code ?? e.cause?.code ?? e.cause?.message ?? e.message);
    return new SearxUnreachableError(`SearXNG at ${this.base.origin} is unreachable: ${why}`);
  }
}
