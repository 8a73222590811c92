import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Logger } from '@drael/logger';
import { apiErrorOf, logServerError, writeErrorResponse } from './error-response.js';
import { lingerIfBodyUnread } from '../http/lingering-close.js';

/**
 * Renders every error leaving the gateway's Nest routes as the OpenAI envelope
 * `{"error":{"message","type","param","code"}}` (error-response.ts maps the exception).
 */
@Catch()
export class OpenAIExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = apiErrorOf(exception);
    logServerError(this.logger, exception, error);
    if (reply.raw.headersSent || reply.sent) {
      // Headers already left (a stream in progress), or a hijacked reply (the proxy writes to
      // the socket itself) that failed before writing anything.
      writeErrorResponse(reply.raw, error, String(reply.request.id));
      return;
    }
    // Refused before its body was read (too large, a hook's refusal): closed after the answer.
    if (lingerIfBodyUnread(reply.request.raw)) void reply.header('connection', 'close');
    void reply
      .status(error.status)
      .headers(error.headers ?? {})
      .header('content-type', 'application/json; charset=utf-8')
      .send(JSON.stringify(error.toEnvelope()));
  }
}
