// First: V8 flags that must be set before the rest of the gateway's code is loaded.
import './v8-flags.js';
import 'reflect-metadata';
import { parseEnv, tracingOf } from '@drael/config';
import { bufferedStdout, createLogger } from '@drael/logger';
import { failBoot } from '@drael/nats-rpc';
import { startTracing, stopTracing } from '@drael/tracing';
import { configSchema } from './config/config.schema.js';
import { startGateway } from './bootstrap.js';
import { ApiError } from './errors/api-error.js';
import { endOpenStreams } from './http/open-streams.js';

/** After the grace, how long the streams' last error events get to leave before the exit. */
const STREAMS_FLUSH_MS = 500;

try {
  const config = parseEnv(configSchema);
  // Before the server is built: its request listener is traced only if tracing is on (off: untouched).
  await startTracing({ service: 'gateway', ...tracingOf(config) });
  // One access line per request: batched writes keep logging off the per-request CPU bill.
  const logOut = bufferedStdout();
  process.on('exit', () => {
    try {
      logOut.flushSync();
    } catch {
      // a write still in flight: nothing more can be done while exiting
    }
  });
  const logger = createLogger('gateway', config.LOG_LEVEL, logOut);
  const gateway = await startGateway(config, logger);
  logger.info({ url: gateway.url, models: Object.keys(config.DRAEL_MODELS) }, `gateway listening on ${gateway.url}`);

  // SIGTERM: /readyz fails at once; after SHUTDOWN_DELAY_MS (serving as before meanwhile) stop
  // accepting, let open requests and streams finish, drain NATS, exit 0. A second signal, or the
  // grace period running out, stops at once with exit 1.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    gateway.startDraining();
    logger.info({ signal, delay_ms: config.SHUTDOWN_DELAY_MS }, 'draining');
    if (config.SHUTDOWN_DELAY_MS > 0) setTimeout(() => closeGateway(), config.SHUTDOWN_DELAY_MS);
    else closeGateway();
  };
  const closeGateway = () => {
    const grace = setTimeout(() => {
      // Streams still open are told why they stop, in their own protocol, rather than cut mid-event;
      // a moment for those last writes to leave, then the exit.
      const ended = endOpenStreams(new ApiError('service_unavailable', 'The gateway is shutting down; retry the request'));
      logger.error({ grace_ms: config.SHUTDOWN_GRACE_MS, streams_ended: ended }, 'open requests did not finish in time');
      setTimeout(() => process.exit(1), ended > 0 ? STREAMS_FLUSH_MS : 0);
    }, config.SHUTDOWN_GRACE_MS);
    grace.unref();
    gateway
      .close()
      .then(stopTracing)
      .then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
} catch (err) {
  failBoot('gateway', err);
}
