import type { ToolOutcome } from './tool-outcome.js';

/**
 * spec 02: datetime runs inside the platform (no provider round trip); the timezone is the
 * declaration's IANA name, UTC by default.
 */
export function runDatetime(timezone: string, now = new Date()): ToolOutcome {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
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
    })
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
    utc_offset: offset === 'Z' ? '+00:00' : offset,
    iso: `${date}T${time}${offset === '+00:00' || offset === '' ? 'Z' : offset}`,
    unix: Math.floor(now.getTime() / 1000),
  };
  return { forModel: { ok: true, ...result }, sources: [], itemFields: { timezone, result } };
}
