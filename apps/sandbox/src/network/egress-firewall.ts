import { runHostCommand } from '../workspace/host-command.js';

// Destinations a sandbox with network on must never reach: this host's and every private,
// shared, loopback, link-local (cloud metadata 169.254.169.254), multicast and reserved range.
const BLOCKED_DESTINATIONS = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
];

/**
 * iptables rules for the egress bridge. Forwarded traffic (to other hosts) passes Docker's
 * DOCKER-USER chain, where private destinations are dropped; traffic addressed to this host
 * itself (any of its addresses, including the bridge gateway) never reaches FORWARD, so INPUT
 * drops everything that arrives from the bridge. Inter-container traffic is off on the network
 * (enable_icc=false) and dropped again here, since the bridge subnet is private. DNS goes through
 * Docker's embedded resolver inside the container's namespace.
 */
export class EgressFirewall {
  constructor(private readonly bridge: string) {}

  private rules(): string[][] {
    return [
      // The network has no IPv6 (Docker also disables it inside the container); drop it anyway.
      ['ip6tables', 'INPUT', '-i', this.bridge, '-j', 'DROP', '-m', 'comment', '--comment', 'drael-sandbox: no IPv6 from sandboxes'],
      ['ip6tables', 'FORWARD', '-i', this.bridge, '-j', 'DROP', '-m', 'comment', '--comment', 'drael-sandbox: no IPv6 from sandboxes'],
      ['iptables', 'INPUT', '-i', this.bridge, '-j', 'DROP', '-m', 'comment', '--comment', 'drael-sandbox: no sandbox reaches the host'],
      ...BLOCKED_DESTINATIONS.map((cidr) => [
        'iptables',
        'DOCKER-USER',
        '-i',
        this.bridge,
        '-d',
        cidr,
        '-j',
        'DROP',
        '-m',
        'comment',
        '--comment',
        'drael-sandbox: egress to the outside only',
      ]),
    ];
  }

  /** Inserts whichever rule is missing (at the top of its chain); idempotent. */
  async ensure(): Promise<void> {
    for (const rule of this.rules()) {
      const [tool, chain, ...spec] = rule as [string, string, ...string[]];
      const present = await runHostCommand(tool, ['-w', '5', '-C', chain, ...spec]).then(
        () => true,
        () => false,
      );
      if (!present) await runHostCommand(tool, ['-w', '5', '-I', chain, '1', ...spec]);
    }
  }

  /** True when every rule is in place; a network run is refused otherwise (fail closed). */
  async verify(): Promise<boolean> {
    try {
      await Promise.all(
        this.rules().map((rule) => {
          const [tool, chain, ...spec] = rule as [string, string, ...string[]];
          return runHostCommand(tool, ['-w', '5', '-C', chain, ...spec]);
        }),
      );
      return true;
    } catch {
      return false;
    }
  }
}
