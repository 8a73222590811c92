import { Controller, Get, Head, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { Public } from '../auth/route-access.js';
import { CONSOLE_FILES, type ConsoleFile } from './console-files.js';

// The console talks to this origin only and loads nothing from anywhere else (issue 23): the
// policy makes the browser refuse any other request, a script injected into it included.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * GET /console and /console/* : the console's static files (apps/console), public like the
 * gateway's health routes (`@Public()`); every call it makes goes to /v1, /api or
 * /admin with the caller's own key or admin token. A path that names no file gets index.html,
 * so the single-page app's own routes survive a reload.
 */
@Controller('console')
@Public()
export class ConsoleController {
  constructor(@Inject(CONSOLE_FILES) private readonly files: Map<string, ConsoleFile>) {}

  @Get()
  @Head()
  root(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    // A relative asset URL in index.html resolves against /console/, never /.
    if (!req.url.split('?', 1)[0]!.endsWith('/')) return reply.status(308).header('location', '/console/').send();
    return this.send(req, reply, 'index.html');
  }

  @Get('*')
  @Head('*')
  file(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const path = decodeURIComponentSafe(req.url.split('?', 1)[0]!.slice('/console/'.length));
    if (this.files.has(path)) return this.send(req, reply, path);
    // A missing hashed asset is a real 404 (a stale tab after a deploy), not the app's page.
    if (path.startsWith('assets/')) this.notFound();
    return this.send(req, reply, 'index.html');
  }

  private send(req: FastifyRequest, reply: FastifyReply, path: string) {
    const f = this.files.get(path);
    if (!f) return this.notFound();
    void reply
      .header('content-type', f.type)
      .header('etag', f.etag)
      .header('cache-control', f.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      // Added to what is there: a listed CORS origin's answer already varies on Origin (http/cors.ts).
      .header('vary', withVary(reply.raw.getHeader('vary'), 'accept-encoding'));
    if (req.headers['if-none-match'] === f.etag) return reply.status(304).send();
    const gzip = f.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    if (gzip) void reply.header('content-encoding', 'gzip');
    return reply.send(gzip ? f.gzip : f.body);
  }

  private notFound(): never {
    throw new ApiError('not_found', this.files.size === 0 ? 'The console is not installed (build apps/console).' : 'Unknown route.');
  }
}

/** A Vary value with `field` added to the fields already named (RFC 9110 §12.5.5: a list). */
function withVary(current: number | string | string[] | undefined, field: string): string {
  const fields = (Array.isArray(current) ? current.join(',') : String(current ?? ''))
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  return fields.some((f) => f.toLowerCase() === field.toLowerCase()) ? fields.join(', ') : [...fields, field].join(', ');
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
