/**
 * Host names refused by name, before any DNS lookup: a resolver inside a cloud answers them with
 * an internal address, and off-cloud the lookup itself would tell an attacker which names exist.
 * `host` is lowercase, without brackets or a trailing dot (parseTarget's and the dialer's form).
 * Returns the reason, or undefined for a name that is judged by what it resolves to.
 */
export function reservedName(host: string): 'loopback' | 'cloud-metadata' | 'private-use' | undefined {
  // RFC 6761: always loopback, whatever a resolver says.
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  if (METADATA_NAMES.has(host)) return 'cloud-metadata';
  // `.internal` is reserved for private use (ICANN, 2024): no public name can ever sit under it,
  // and it is where clouds put their own (metadata.google.internal, instance-data.ec2.internal,
  // ip-10-0-0-1.ec2.internal, *.compute.internal).
  if (host === 'internal' || host.endsWith('.internal')) return 'private-use';
  return undefined;
}

// The instance-metadata names of the SSRF literature (OWASP SSRF cheat sheet, PayloadsAllTheThings
// "Cloud instances"). Their addresses (169.254.169.254, fd00:ec2::254, 100.100.100.200, ...) are
// refused by the address policy too; these are caught by name so no lookup is ever made.
const METADATA_NAMES = new Set([
  'metadata', // GCE's short name (search domain google.internal)
  'metadata.google.internal', // GCE, GKE
  'metadata.goog', // GCE (the name GKE's metadata server answers as well)
  'instance-data', // EC2 (short name of instance-data.ec2.internal)
  'metadata.azure.com', // Azure IMDS's name in some SDKs and images
  'metadata.tencentyun.com', // Tencent Cloud
  'metadata.packet.net', // Equinix Metal
]);
