import type { ToolOutcome } from './tool-outcome.js';

// Building an Intl formatter costs far more than using one; one per timezone seen, kept.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
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
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** True for an IANA timezone name this runtime knows. */
export function validTimezone(tz: string): boolean {
  try {
    formatterFor(tz);
    return true;
  } catch {
    return false;
  }
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
