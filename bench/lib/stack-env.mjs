// What every bench that starts services shares: the repository root, the NATS it uses, a NATS
// prefix of its own per run (so benches never meet each other's or the tests' subjects), and the
// wait for an HTTP service to come up.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** `<tag>-<8 hex>`: a fresh NATS prefix (and name stem) for one run. */
export const benchPrefix = (tag = 'bench') => `${tag}-${randomBytes(4).toString('hex')}`;

/** Resolves once GET `url` answers 2xx. A gateway boots in seconds; on a machine shared by several builds (load average 50 on 2 cores) it took over 30. */
export async function waitHttp(url, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
