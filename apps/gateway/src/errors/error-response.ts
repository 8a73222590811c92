import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
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
    if (fastifyError.code === 'FST_ERR_BAD_URL') return transportError(400, 'invalid_request', 'The request path is not valid percent-encoded UTF-8.');
    if (fastifyError.code === 'FST_ERR_MAX_PARAM_LENGTH') return transportError(414, 'uri_too_long', 'A path parameter is longer than 100 characters.');
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

/**
 * An error of the HTTP layer itself (timeouts, sizes, encodings, malformed requests), answered
 * before any route or service has a say: its status is fixed here rather than in the code table.
 */
export function transportError(status: 400 | 403 | 405 | 408 | 413 | 414 | 415 | 417 | 431, code: string, message: string): ApiError {
  return new ApiError(code, message, null, { status, type: 'invalid_request_error' });
}

/**
 * What Node's HTTP parser refuses before a request exists (`clientError`: malformed request
 * line or headers, headers too large, headers or the whole request too slow), as the envelope,
 * written straight to the socket, which is then closed: the connection's framing is lost.
 */
export function writeClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? transportError(408, 'request_timeout', 'The request headers or body did not arrive in time.')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? transportError(431, 'headers_too_large', 'The request headers are too large.')
        : transportError(400, 'invalid_request', 'Malformed HTTP request.');
  writeRawErrorAndClose(error, socket);
}

/** An error written straight to a connection no HTTP response object owns, then the connection closed. */
export function writeRawErrorAndClose(error: ApiError, socket: Duplex): void {
  // A response of this connection already on its way: nothing can follow it cleanly.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(error.toEnvelope());
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  // Closed once the answer is flushed (a stalled client would otherwise hold it open).
  const net = socket as Duplex & { destroySoon?: () => void };
  if (net.destroySoon) net.destroySoon();
  else socket.destroy();
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
