import type { TraceSpan } from './index.js';

/** The span handed out when tracing is off, or outside any span: every method does nothing. */
export const NO_SPAN: TraceSpan = Object.freeze({
  traceparent: undefined,
  traceId: undefined,
  setAttributes() {},
  rename() {},
  fail() {},
  end() {},
  run: <T>(fn: () => T): T => fn(),
});
