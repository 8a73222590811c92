import { envInt } from '@drael/config';

/** The HTTP server's bounds on slow clients (issue 15), joined into the gateway's config schema. */
export const httpConfigShape = {
  // Time from a connection's first byte to the end of its request headers; past it: 408, closed.
  HTTP_HEADERS_TIMEOUT_MS: envInt(1_000, 120_000).default(10_000),
  // Longest silence allowed while a request body is arriving (and on a connection that has sent
  // nothing yet); past it: 408, closed. At most 30 s (issue 15: a stalled body is closed within 30 s).
  HTTP_BODY_IDLE_TIMEOUT_MS: envInt(100, 30_000).default(15_000),
  // Time to receive a whole request, headers and body (a slow but moving upload); past it: 408, closed.
  HTTP_REQUEST_TIMEOUT_MS: envInt(1_000, 3_600_000).default(300_000),
};
