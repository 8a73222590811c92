import ipaddr from 'ipaddr.js';

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

// ipaddr.js labels these 'unicast' although they reach (or may reach) internal hosts, so they are
// closed here by hand: IPv4-compatible IPv6 (::a.b.c.d, deprecated but still routed by some
// stacks), the local-use NAT64 prefix (RFC 8215), and the ORCHID/documentation blocks it misses.
const EXTRA_BLOCKED: Cidr[] = ['::/96', '64:ff9b:1::/48', '2001:10::/28', '2001:20::/28', '5f00::/16', '3fff::/20'].map((c) => ipaddr.parseCIDR(c));

export interface AddressVerdict {
  allowed: boolean;
  /** ipaddr.js's range name, or our own label for the forms it misses. */
  range: string;
}

/**
 * Which resolved addresses a fetch may connect to. Production: public unicast only.
 * Tests about extraction and limits may open exact CIDRs (FETCH_TEST_ALLOW_CIDRS); the SSRF
 * suite runs without them.
 */
export class AddressPolicy {
  private readonly testAllowed: Cidr[];

  constructor(testAllowCidrs: readonly string[] = []) {
    this.testAllowed = testAllowCidrs.map((c) => ipaddr.parseCIDR(c.trim()));
  }

  static fromConfig(value: string | undefined): AddressPolicy {
    return new AddressPolicy(value ? value.split(',').filter((s) => s.trim().length > 0) : []);
  }

  get hasTestAllowances(): boolean {
    return this.testAllowed.length > 0;
  }

  /** `address` is a resolved IP literal (no brackets). Anything unparsable is refused. */
  check(address: string): AddressVerdict {
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      // parse() (not process()) keeps IPv4-mapped IPv6 as IPv6 so its range is judged below.
      parsed = ipaddr.parse(address);
    } catch {
      return { allowed: false, range: 'unparsable' };
    }
    if (this.testAllowed.some((c) => matches(parsed, c))) return { allowed: true, range: 'test-allowed' };
    const range = parsed.range();
    if (range !== 'unicast') return { allowed: false, range };
    if (EXTRA_BLOCKED.some((c) => matches(parsed, c))) return { allowed: false, range: 'reserved' };
    return { allowed: true, range };
  }
}

function matches(ip: ipaddr.IPv4 | ipaddr.IPv6, cidr: Cidr): boolean {
  return ip.kind() === cidr[0].kind() && ip.match(cidr);
}
