import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/route-access.js';
import { openApiDocument } from './openapi.document.js';
import { referencePage } from './reference-page.js';

/**
 * The HTTP surface described (issue 22): the OpenAPI document and its reference page, public like
 * the health probes (they describe routes, never an account). Built once, on first request.
 */
@Controller()
@Public()
export class OpenApiController {
  private document?: string;
  private page?: string;

  @Get('openapi.json')
  json(@Res() reply: FastifyReply) {
    this.document ??= JSON.stringify(openApiDocument());
    return reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(this.document);
  }

  @Get('docs')
  docs(@Res() reply: FastifyReply) {
    this.page ??= referencePage(openApiDocument());
    return (
      reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        // The page is static: no script, no remote resource.
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
        .header('x-content-type-options', 'nosniff')
        .send(this.page)
    );
  }
}
