/**
 * Whether a failed query failed because the database could not be used at that moment (down,
 * restarting, unreachable, out of connections, too slow), rather than because of the query: such
 * a failure is the service's `unavailable` (retryable; 503 at the gateway), never `internal` (a
 * defect, 500). Recognised through both access paths a service has: Prisma's errors (its own
 * connection codes, and the driver adapter's error kinds) and node-postgres's (socket codes,
 * SQLSTATEs, the pool's messages), looking through `cause` chains.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && typeof e === 'object' && e !== null; depth++) {
    const x = e as { code?: unknown; kind?: unknown; message?: unknown; meta?: { driverAdapterError?: unknown }; cause?: unknown };
    if (typeof x.code === 'string' && (UNAVAILABLE_CODES.has(x.code) || x.code.startsWith('08'))) return true;
    if (typeof x.kind === 'string' && UNAVAILABLE_KINDS.has(x.kind)) return true;
    if (typeof x.message === 'string' && UNAVAILABLE_MESSAGES.test(x.message)) return true;
    e = x.meta?.driverAdapterError ?? x.cause;
  }
  return false;
}

const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  // Prisma: can't reach the server, timed out reaching it, operation timed out, server closed the
  // connection, connection pool timeout, an interactive transaction that could not begin or end
  // within its bounds (a burst queued on the pool or on a lock), too many connections.
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
  'P2028',
  'P2037',
  // Sockets.
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // PostgreSQL (class 08, connection exceptions, is matched by its prefix): shutting down, crash
  // shutdown, cannot connect now (starting up, recovering), too many connections, a statement
  // cancelled by statement_timeout.
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '57014',
]);

/** The driver adapter's kinds for the same (@prisma/adapter-pg). */
const UNAVAILABLE_KINDS: ReadonlySet<string> = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'TlsConnectionError']);

/** node-postgres's own errors, which carry no code (its query_timeout's among them). */
const UNAVAILABLE_MESSAGES = /^(?:Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Query read timeout)/i;
