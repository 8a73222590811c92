import type { ServerResponse } from 'node:http';
import { HttpException } from '@nestjs/common';
import type { Logger } from '@drael/logger';
import { ApiError } from './api-error.js';
import { writeJsonResponse } from '../http/json-response.js';

/**
 * Any exception as the ApiError the client sees: our own ApiErrors, typed NATS errors, Nest's
 * HttpExceptions (unknown routes), Fastify's errors (body too large, bad content type) and
 * anything unexpected (answered as 500 without internals).
 */
export function apiErrorOf(exception: unknown): ApiError {
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
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return bodyTooLarge();
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

export function bodyTooLarge(): ApiError {
  return new ApiError('invalid_request', 'Request body is too large', null, { status: 413, type: 'invalid_request_error' });
}

/** Unexpected failures are logged with their cause; expected 5xx (upstream down, ...) briefly. */
export function logServerError(logger: Logger, exception: unknown, error: ApiError): void {
  if (!(exception instanceof ApiError) && error.status >= 500) logger.error({ err: exception, code: error.code }, error.message);
  else if (error.status >= 500) logger.warn({ code: error.code, status: error.status }, error.message);
}

/**
 * Writes the envelope on a raw response whose head has not left yet; a response already
 * streaming is only ended (the stream writer reports failures in-band).
 */
export function writeErrorResponse(res: ServerResponse, error: ApiError, requestId: string, head?: Record<string, string | number>): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  // `head`: headers collected for this answer and not set on res (the hot routes').
  const out = head ?? {};
  if (error.headers) Object.assign(out, error.headers);
  out['x-request-id'] = requestId;
  writeJsonResponse(res, error.status, error.toEnvelope(), out);
}
