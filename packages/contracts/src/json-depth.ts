/**
 * The bound on JSON nesting, at every edge: each HTTP route's body (the gateway) and each NATS
 * request (packages/nats-rpc). Far above any real request (tool schemas nest ~10), far below what
 * recursive code (validation, re-encoding, JSON.stringify) can walk without running out of stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` (parsed JSON) nests objects or arrays more than `limit` levels deep. It visits
 * containers only and stops at the limit, so its cost follows the value's structure, not its size.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestedDeeperThan(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) if (nestedDeeperThan((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}
