import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchCatalog } from '@drael/contracts';
import { NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { startServiceProcess, testPrefix, type ServiceProcess } from '@drael/test-support';
import { html, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// The SSRF suite runs the built service as production runs it: no FETCH_TEST_ALLOW_CIDRS, so the
// guard's production policy decides. A loopback server stands where an attacker would aim, and
// must never see a request.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
let service: ServiceProcess;
let client: NatsRpcClient;
let internal: FixtureServer;
const prefix = testPrefix('fetch-ssrf');

beforeAll(async () => {
  internal = await startFixtureServer('127.0.0.1', (_req, res) => html(res, '<p>internal secret</p>'));
  service = await startServiceProcess('fetch', {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    FETCH_CACHE_PREFIX: `${prefix}:`,
    TOR_SOCKS_URL: '',
  });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
});

afterAll(async () => {
  await client?.close();
  await service?.stop();
  await internal?.close();
});

const P = () => internal.port;
// [label, url, expected code]
const FORMS: [string, () => string, 'blocked_address' | 'bad_request'][] = [
  ['loopback 127.0.0.1', () => `http://127.0.0.1:${P()}/`, 'blocked_address'],
  ['loopback elsewhere in 127/8', () => `http://127.9.9.9:${P()}/`, 'blocked_address'],
  ['short IPv4 127.1', () => `http://127.1:${P()}/`, 'blocked_address'],
  ['decimal IPv4 2130706433', () => `http://2130706433:${P()}/`, 'blocked_address'],
  ['hex IPv4 0x7f000001', () => `http://0x7f000001:${P()}/`, 'blocked_address'],
  ['octal IPv4 0177.0.0.1', () => `http://0177.0.0.1:${P()}/`, 'blocked_address'],
  ['mixed hex dotted 0x7f.0.0.0x1', () => `http://0x7f.0.0.0x1:${P()}/`, 'blocked_address'],
  ['percent-encoded 127.0.0.1', () => `http://%31%32%37.0.0.1:${P()}/`, 'blocked_address'],
  ['trailing dot 127.0.0.1.', () => `http://127.0.0.1.:${P()}/`, 'blocked_address'],
  ['IPv6 loopback [::1]', () => `http://[::1]:${P()}/`, 'blocked_address'],
  ['IPv4-mapped [::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${P()}/`, 'blocked_address'],
  ['IPv4-mapped hex [::ffff:7f00:1]', () => `http://[::ffff:7f00:1]:${P()}/`, 'blocked_address'],
  ['IPv4-mapped long form', () => `http://[0:0:0:0:0:ffff:7f00:1]:${P()}/`, 'blocked_address'],
  ['IPv4-compatible [::127.0.0.1]', () => `http://[::127.0.0.1]:${P()}/`, 'blocked_address'],
  ['NAT64 [64:ff9b::7f00:1]', () => `http://[64:ff9b::7f00:1]:${P()}/`, 'blocked_address'],
  ['local-use NAT64 [64:ff9b:1::a00:1]', () => `http://[64:ff9b:1::a00:1]/`, 'blocked_address'],
  ['6to4 of loopback [2002:7f00:1::]', () => `http://[2002:7f00:1::]:${P()}/`, 'blocked_address'],
  ['SIIT [::ffff:0:7f00:1]', () => `http://[::ffff:0:7f00:1]:${P()}/`, 'blocked_address'],
  ['unspecified 0.0.0.0', () => `http://0.0.0.0:${P()}/`, 'blocked_address'],
  ['unspecified short 0', () => `http://0:${P()}/`, 'blocked_address'],
  ['IPv6 unspecified [::]', () => `http://[::]:${P()}/`, 'blocked_address'],
  ['private 10/8', () => 'http://10.0.0.1/', 'blocked_address'],
  ['private 172.16/12', () => 'http://172.16.5.4/', 'blocked_address'],
  ['private 192.168/16', () => 'http://192.168.1.1/', 'blocked_address'],
  ['cloud metadata 169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/', 'blocked_address'],
  ['cloud metadata, decimal spelling', () => 'http://2852039166/latest/meta-data/', 'blocked_address'],
  ['cloud metadata IPv6 [fd00:ec2::254]', () => 'http://[fd00:ec2::254]/', 'blocked_address'],
  ['CGNAT 100.64/10', () => 'http://100.64.0.1/', 'blocked_address'],
  ['multicast 224.0.0.1', () => 'http://224.0.0.1/', 'blocked_address'],
  ['IPv6 multicast [ff02::1]', () => 'http://[ff02::1]/', 'blocked_address'],
  ['benchmarking 198.18/15', () => 'http://198.18.0.1/', 'blocked_address'],
  ['IPv6 benchmarking [2001:2::1]', () => 'http://[2001:2::1]/', 'blocked_address'],
  ['reserved 240/4', () => 'http://240.0.0.1/', 'blocked_address'],
  ['broadcast 255.255.255.255', () => 'http://255.255.255.255/', 'blocked_address'],
  ['documentation 192.0.2/24', () => 'http://192.0.2.1/', 'blocked_address'],
  ['IETF protocol 192.0.0/24', () => 'http://192.0.0.1/', 'blocked_address'],
  ['IPv6 link-local [fe80::1]', () => 'http://[fe80::1]/', 'blocked_address'],
  ['IPv6 unique-local [fc00::1]', () => 'http://[fc00::1]/', 'blocked_address'],
  ['IPv6 site-local [fec0::1]', () => 'http://[fec0::1]/', 'blocked_address'],
  ['IPv6 documentation [2001:db8::1]', () => 'http://[2001:db8::1]/', 'blocked_address'],
  ['name localhost', () => `http://localhost:${P()}/`, 'blocked_address'],
  ['name under .localhost', () => `http://api.localhost:${P()}/`, 'blocked_address'],
  ['name LOCALHOST. (case, trailing dot)', () => `http://LOCALHOST.:${P()}/`, 'blocked_address'],
  ['metadata name metadata.google.internal', () => 'http://metadata.google.internal/computeMetadata/v1/', 'blocked_address'],
  ['metadata name, upper case and trailing dot', () => 'http://METADATA.Google.Internal./computeMetadata/v1/', 'blocked_address'],
  ['metadata name metadata.goog', () => 'http://metadata.goog/computeMetadata/v1/', 'blocked_address'],
  ['metadata short name metadata', () => 'http://metadata/computeMetadata/v1/', 'blocked_address'],
  ['metadata short name Metadata.', () => 'http://Metadata./computeMetadata/v1/', 'blocked_address'],
  ['metadata name instance-data', () => 'http://instance-data/latest/meta-data/', 'blocked_address'],
  ['metadata name INSTANCE-DATA.ec2.internal.', () => 'http://INSTANCE-DATA.ec2.internal./latest/meta-data/', 'blocked_address'],
  ['metadata name metadata.tencentyun.com', () => 'http://metadata.tencentyun.com/latest/meta-data/', 'blocked_address'],
  ['private-use TLD .internal', () => 'http://ip-10-0-0-1.ec2.internal/', 'blocked_address'],
  ['credentials user:pass@', () => `http://user:pass@127.0.0.2:${P()}/`, 'bad_request'],
  ['credentials user@ on a public name', () => 'https://user@example.com/', 'bad_request'],
  ['scheme file:', () => 'file:///etc/passwd', 'bad_request'],
  ['scheme ftp:', () => 'ftp://example.com/file', 'bad_request'],
  ['scheme gopher:', () => `gopher://127.0.0.1:${P()}/_GET`, 'bad_request'],
  ['scheme javascript:', () => 'javascript:alert(1)', 'bad_request'],
  ['scheme data:', () => 'data:text/html,<p>hi</p>', 'bad_request'],
  ['scheme ws:', () => `ws://127.0.0.1:${P()}/`, 'bad_request'],
  ['not a URL', () => 'not a url', 'bad_request'],
  ['relative URL', () => '/etc/passwd', 'bad_request'],
];

describe.each(['http', 'browser'] as const)('SSRF guard, production policy, render=%s', (render) => {
  it.each(FORMS)('%s is refused', async (_label, url, code) => {
    const err = await client.request(fetchCatalog.page, { url: url(), render }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).code).toBe(code);
    expect((err as RpcError).retryable).toBe(false);
  });
});

describe('SSRF guard, what the internal server saw', () => {
  it('the loopback server never received a request', () => {
    expect(internal.hits).toEqual([]);
    expect(internal.upgrades).toEqual([]);
  });

  it('every refusal says the host does not resolve to a public address, and names no address', async () => {
    for (const url of [`http://127.0.0.1:${P()}/`, 'http://metadata.google.internal/', `http://localhost:${P()}/`, 'http://[fd00:ec2::254]/']) {
      const err = (await client.request(fetchCatalog.page, { url }).catch((e: unknown) => e)) as RpcError;
      expect(err.code).toBe('blocked_address');
      expect(err.message).toBe(`refusing to fetch ${new URL(url).href}: the host does not resolve to a public address`);
      expect(err.details).not.toHaveProperty('address');
    }
  });

  it('a blocked address says which range refused it', async () => {
    const err = (await client.request(fetchCatalog.page, { url: 'http://[::ffff:169.254.169.254]/' }).catch((e: unknown) => e)) as RpcError;
    expect(err.code).toBe('blocked_address');
    expect(err.details).toMatchObject({ range: 'ipv4Mapped' });
  });

  it('a malformed payload is a bad_request, not a crash', async () => {
    const err = (await client.request(fetchCatalog.page, { url: 'http://example.com/', max_chars: 0 }).catch((e: unknown) => e)) as RpcError;
    expect(err.code).toBe('bad_request');
  });
});
