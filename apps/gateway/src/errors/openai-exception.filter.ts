import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Logger } from '@drael/logger';
import { ApiError } from './api-error.js';

/**
 * Renders every error leaving the gateway's HTTP surface as the OpenAI envelope
 * `{"error":{"message","type","param","code"}}`: our own ApiErrors, typed NATS errors,
 * Nest's HttpExceptions (unknown routes), Fastify's errors (body too large, bad content type)
 * and anything unexpected (logged, answered as 500 without internals).
 */
@Catch()
export class OpenAIExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = this.toApiError(exception);
    if (!(exception instanceof ApiError) && error.status >= 500) this.logger.error({ err: exception, code: error.code }, error.message);
    else if (error.status >= 500) this.logger.warn({ code: error.code, status: error.status }, error.message);
    const body = JSON.stringify(error.toEnvelope());
    const raw = reply.raw;
    if (raw.headersSent) {
      // Headers already left (a stream in progress): the stream writer reports failures in-band.
      if (!raw.writableEnded) raw.end();
      return;
    }
    if (reply.sent) {
      // A hijacked reply (the proxy writes to the socket itself) that failed before writing anything.
      raw.writeHead(error.status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'x-request-id': String(reply.request.id),
      });
      raw.end(body);
      return;
    }
    void reply.status(error.status).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private toApiError(exception: unknown): ApiError {
    if (exception instanceof ApiError) return exception;
    const fromRpc = ApiError.fromRpc(exception);
    if (fromRpc) return fromRpc;
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) return new ApiError('not_found', `Unknown route: ${exception.message.replace(/^Cannot /, '')}`);
      return new ApiError(status >= 500 ? 'internal' : 'invalid_request', exception.message, null, {
        status,
        type: status >= 500 ? 'server_error' : 'invalid_request_error',
      });
    }
    const fastifyError = exception as { statusCode?: number; code?: string; message?: string };
    if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode < 500) {
      if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return new ApiError('invalid_request', 'Request body is too large', null, { status: 413, type: 'invalid_request_error' });
      }
      if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        return new ApiError('invalid_request', 'Content-Type must be application/json', null, { status: 415, type: 'invalid_request_error' });
      }
      if (fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        return new ApiError('invalid_json', 'Request body is not valid JSON');
      }
      return new ApiError('invalid_request', fastifyError.message ?? 'Bad request', null, {
        status: fastifyError.statusCode,
        type: 'invalid_request_error',
      });
    }
    return new ApiError('internal', 'Internal server error');
  }
}
