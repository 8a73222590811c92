import { describe, expect, it } from 'vitest';
import { AddressPolicy } from './address-policy.js';

const production = new AddressPolicy();

describe('AddressPolicy (production)', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.100.100.200',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.251',
    '239.255.255.250',
    '255.255.255.255',
    '198.18.0.1',
    '198.19.255.255',
    '240.0.0.1',
    '192.0.2.5',
    '198.51.100.5',
    '203.0.113.5',
    '192.0.0.170',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    '::a9fe:a9fe',
    '64:ff9b::7f00:1',
    '64:ff9b:1::1',
    '2002:a9fe:a9fe::',
    '2001:0:4136:e378::1',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'fec0::1',
    'ff02::1',
    '2001:db8::1',
    '100::1',
    '2001:2::1',
    '::ffff:0:7f00:1',
    '2001:10::1',
  ])('%s is refused', (address) => {
    expect(production.check(address).allowed).toBe(false);
  });

  it.each(['93.184.216.34', '1.1.1.1', '8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])('%s is allowed', (address) => {
    expect(production.check(address)).toEqual({ allowed: true, range: 'unicast' });
  });

  it('anything unparsable is refused', () => {
    expect(production.check('not-an-ip').allowed).toBe(false);
  });
});

describe('AddressPolicy (test allowances)', () => {
  const testing = AddressPolicy.fromConfig('127.0.0.2/32');

  it('opens exactly the listed range', () => {
    expect(testing.check('127.0.0.2')).toEqual({ allowed: true, range: 'test-allowed' });
    expect(testing.check('127.0.0.1').allowed).toBe(false);
    expect(testing.check('127.0.0.3').allowed).toBe(false);
  });

  it('does not open the IPv4-mapped spelling of the same address', () => {
    expect(testing.check('::ffff:127.0.0.2').allowed).toBe(false);
  });
});
