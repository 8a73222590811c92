import type { ToolOutcome } from './tool-outcome.js';

// Building an Intl formatter costs far more than using one; one per timezone, kept. Keyed by the
// runtime's own name for it (resolvedOptions().timeZone), never by the declared string: Intl takes
// any capitalisation, so that key let a client mint entries without end (50,000 variants of one
// name held 1.3 GB, audit). The runtime's names are a bounded set (some 420 zones and under 2,900
// fixed offsets such as +05:30): past MAX_KEPT, a formatter is built for the call and not kept.
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_KEPT = 1000;

/** The runtime's own name for an IANA timezone in any capitalisation, or undefined for one it does not know. Nothing is kept. */
function canonicalTimezone(tz: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

function formatterFor(timezone: string): Intl.DateTimeFormat {
  // A name declared as the runtime spells it finds its formatter without building one to ask.
  const kept = formatters.get(timezone);
  if (kept) return kept;
  const canonical = canonicalTimezone(timezone);
  if (canonical === undefined) throw new RangeError(`Unknown IANA timezone '${timezone}'`);
  let formatter = formatters.get(canonical);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: canonical,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    });
    if (formatters.size < MAX_KEPT) formatters.set(canonical, formatter);
  }
  return formatter;
}

/** How many formatters are kept (one per canonical timezone run so far). */
export function formattersKept(): number {
  return formatters.size;
}

/** True for an IANA timezone name this runtime knows (checked without keeping anything). */
export function validTimezone(tz: string): boolean {
  return canonicalTimezone(tz) !== undefined;
}

/**
 * spec 02: datetime runs inside the platform (no provider round trip); the timezone is the
 * declaration's IANA name, UTC by default.
 */
export function runDatetime(timezone: string, now = new Date()): ToolOutcome {
  const parts = Object.fromEntries(
    formatterFor(timezone)
      .formatToParts(now)
      .map((p) => [p.type, p.value]),
  ) as Record<string, string>;
  const offset = (parts.timeZoneName ?? 'GMT').replace(/^GMT/, '') || '+00:00';
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  const time = `${parts.hour}:${parts.minute}:${parts.second}`;
  const result = {
    timezone,
    date,
    time,
    weekday: parts.weekday,
    utc_offset: offset,
    iso: `${date}T${time}${offset === '+00:00' ? 'Z' : offset}`,
    unix: Math.floor(now.getTime() / 1000),
  };
  return { forModel: { ok: true, ...result }, sources: [], itemFields: { timezone, result } };
}
