import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings for the gateway process, set before any other module loads (main.ts imports this
 * first). Allocation-site pretenuring is off: the sites shared by every request (Node's HTTP
 * internals, undici, the hot route) see their objects survive while Nest boots and warms up, V8
 * then allocates them straight in the old generation for good, and every request's garbage was
 * left to concurrent marking and mark-compact (V8's helper threads, ~80-130 µs CPU per proxied
 * request on the bench machine; docs/decisions/0002-gateway-hot-path.md). Without it they die
 * young in the scavenger, as in a plain Node proxy.
 */
setFlagsFromString('--no-allocation-site-pretenuring');
