import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import {
  FIXTURE_ALLOW,
  StubResolver,
  article,
  failure,
  html,
  makeRuntime,
  startFixtureServer,
  startSocksRecorder,
  type FixtureServer,
  type SocksRecorder,
} from './support/fixtures.js';

// A local SOCKS5 server stands in for Tor (the Tor network cannot be reached from CI): it
// records what each CONNECT asked for and serves the "onion service" itself.
const ONION = 'drael2vxw3q6kzm7u4lbnq3bz2x7d6t3y4w5c6v7b8n9m0a1s2d3f4gh.onion';
const OFFLINE = 'offlinexxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.onion';
const NEEDS_AUTH = 'authxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.onion';
const BAD = 'notanonionaddress.onion';

let tor: SocksRecorder;
let clear: FixtureServer;
let runtime: FetchRuntime;
let resolver: StubResolver;

beforeAll(async () => {
  tor = await startSocksRecorder(
    (host) => (host === OFFLINE ? 0xf0 : host === NEEDS_AUTH ? 0xf4 : host === BAD ? 0xf6 : 0x00),
    (host, path) => article(`Hidden service ${host.split('.')[0]!.slice(0, 8)} ${path}`, 5),
  );
  clear = await startFixtureServer('127.0.0.2', (_req, res) => html(res, article('Clear web page', 5)));
  // The resolver hook: every name this host would resolve passes through it.
  resolver = new StubResolver((name) => (name === 'clear.test' ? ['127.0.0.2'] : []));
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, tor: tor.url, resolver, cache: false });
  // Chromium's cold start is not part of a fetch's 10 s budget (the service warms it at boot).
  await runtime.browser!.warm();
});

afterAll(async () => {
  await runtime?.close();
  await tor?.close();
  await clear?.close();
});

describe('.onion goes to Tor as a name (socks5h) and never to this host resolver', () => {
  it.each(['http', 'browser'] as const)('render=%s', async (render) => {
    const before = tor.requests.length;
    const page = await runtime.pages.fetch({ url: `http://${ONION}/about?${render}`, render });
    expect(page.content).toContain('Hidden service');
    const asked = tor.requests.slice(before);
    expect(asked.length).toBeGreaterThan(0);
    // ATYP 3 = domain name: the proxy got the name, not an address this host looked up.
    for (const r of asked) expect(r).toEqual({ atyp: 3, host: ONION, port: 80 });
    expect(resolver.asked.filter((n) => n.endsWith('.onion'))).toEqual([]);
  });

  it('an onion service on another port keeps its port', async () => {
    const before = tor.requests.length;
    await runtime.pages.fetch({ url: `http://${ONION}:8080/`, render: 'http' });
    expect(tor.requests.slice(before)).toEqual([{ atyp: 3, host: ONION, port: 8080 }]);
  });

  it('clear-web addresses never go through Tor', async () => {
    const before = tor.requests.length;
    const viaName = await runtime.pages.fetch({ url: `http://clear.test:${clear.port}/`, render: 'http' });
    const viaBrowser = await runtime.pages.fetch({ url: clear.url('/b'), render: 'browser' });
    expect(viaName.content).toContain('Clear web page');
    expect(viaBrowser.content).toContain('Clear web page');
    expect(tor.requests.length).toBe(before);
    expect(resolver.asked).toContain('clear.test');
  });
});

describe("Tor's onion-specific failures are typed errors", () => {
  it.each([
    [OFFLINE, 0xf0, /descriptor not found/, true],
    [NEEDS_AUTH, 0xf4, /client authorization/, true],
    [BAD, 0xf6, /invalid onion address/, false],
  ])('%s → onion_unreachable (SOCKS reply %i)', async (host, reply, reason, retryable) => {
    const err = await failure(runtime.pages.fetch({ url: `http://${host}/`, render: 'http' }));
    expect(err.code).toBe('onion_unreachable');
    expect(err.message).toMatch(reason);
    expect(err.details).toMatchObject({ host, socks_reply: reply });
    expect((err as unknown as { retryable: boolean }).retryable).toBe(retryable);
  });

  it('Tor not running → onion_unreachable, retryable', async () => {
    const down = makeRuntime({ allow: FIXTURE_ALLOW, tor: 'socks5h://127.0.0.1:9', browser: false, cache: false });
    try {
      const err = await failure(down.pages.fetch({ url: `http://${ONION}/`, render: 'http' }));
      expect(err.code).toBe('onion_unreachable');
    } finally {
      await down.close();
    }
  });

  it('no Tor configured → onion_unreachable, and nothing is resolved', async () => {
    const hook = new StubResolver(() => []);
    const none = makeRuntime({ allow: FIXTURE_ALLOW, browser: false, cache: false, resolver: hook });
    try {
      const err = await failure(none.pages.fetch({ url: `http://${ONION}/` }));
      expect(err.code).toBe('onion_unreachable');
      expect(hook.asked).toEqual([]);
    } finally {
      await none.close();
    }
  });

  it('a socks5:// Tor URL (local resolution) is refused at boot', () => {
    expect(() => makeRuntime({ tor: 'socks5://127.0.0.1:9050', browser: false, cache: false })).toThrow(/socks5h/);
  });
});
