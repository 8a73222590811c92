import { registerHooks } from 'node:module';

// Preloaded into a process under test (`node --import <MODULE_RECORDER>`): writes one stderr line
// per OpenTelemetry module the process loads, so a test can prove that tracing left off loads
// none (and, as its control, that tracing on does). Pipes to a parent are synchronous on Linux:
// no line is lost when the process exits.
registerHooks({
  load(url, context, nextLoad) {
    if (url.includes('/@opentelemetry/')) process.stderr.write(`module-loaded ${url}\n`);
    return nextLoad(url, context);
  },
});
