import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../errors/api-error.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The admin API's rule: `Authorization: Bearer $DRAEL_ADMIN_TOKEN`; API keys do not open it.
 * Checked by the route access hook on every `@AdminOnly()` route, before the body is read.
 */
export class AdminToken {
  private readonly expected?: Buffer;

  constructor(token: string | undefined) {
    this.expected = token ? digest(token) : undefined;
  }

  /** Whether the request carries the admin token (no answer either way: for what a public route adds for the operator). */
  allows(headers: IncomingHttpHeaders): boolean {
    const token = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
    return !!this.expected && !!token && timingSafeEqual(digest(token), this.expected);
  }

  check(headers: IncomingHttpHeaders): void {
    // No token configured: the admin API is off and looks like any unknown route.
    if (!this.expected) throw new ApiError('not_found', 'Unknown route.');
    const token = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
    if (!token) throw new ApiError('missing_api_key', 'The admin API needs "Authorization: Bearer <admin token>".');
    // Compared as fixed-length digests in constant time: the token's length and prefix leak nothing.
    if (!timingSafeEqual(digest(token), this.expected)) throw new ApiError('invalid_api_key', 'Incorrect admin token.');
  }
}
