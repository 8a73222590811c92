import { z } from 'zod';
import { envInt, envList } from '@drael/config';

/** The HTTP server's bounds on slow clients (issue 15) and its CORS allowlist, joined into the gateway's config schema. */
export const httpConfigShape = {
  // Time from a connection's first byte to the end of its request headers; past it: 408, closed.
  HTTP_HEADERS_TIMEOUT_MS: envInt(1_000, 120_000).default(10_000),
  // Longest silence allowed while a request body is arriving (and on a connection that has sent
  // nothing yet); past it: 408, closed. At most 30 s (issue 15: a stalled body is closed within 30 s).
  HTTP_BODY_IDLE_TIMEOUT_MS: envInt(100, 30_000).default(15_000),
  // Longest a client may take none of an answer's bytes waiting for it (it stopped reading: its
  // request, upstream call and queued answer were held for as long as it kept the connection
  // open); past it: closed, the request ended as for a client that left. Looked at in steps of
  // HTTP_BODY_IDLE_TIMEOUT_MS. nginx's send_timeout is 60 s likewise.
  HTTP_SEND_IDLE_TIMEOUT_MS: envInt(100, 3_600_000).default(60_000),
  // Time to receive a whole request, headers and body (a slow but moving upload); past it: 408, closed.
  HTTP_REQUEST_TIMEOUT_MS: envInt(1_000, 3_600_000).default(300_000),
  // Browser origins allowed to call the API (CORS), comma separated, each exactly as a browser
  // sends it (`https://app.example.com`, `http://localhost:3000`: scheme, host, port if not the
  // default; no path, no trailing slash). Unset or empty: CORS is off (fail closed). `*` is refused:
  // the gateway also serves the admin API and key-scoped data, and a wildcard would let any page
  // on the web drive them from a browser that holds a key (http/cors.ts).
  CORS_ALLOWED_ORIGINS: envList()
    .pipe(z.array(z.string().refine(isExactOrigin, 'each entry must be an exact origin such as https://app.example.com (scheme://host[:port], no path); "*" is not accepted')))
    .transform((origins) => new Set(origins) as ReadonlySet<string>),
};

/** `https://host[:port]` exactly as the Origin header carries it: http(s), no path, query, user or trailing slash. */
function isExactOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}
