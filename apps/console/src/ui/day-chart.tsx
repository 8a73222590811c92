import type { UsageDay } from '@drael/contracts';
import { usd } from './format.js';

/**
 * Spend and billed requests per day as two small SVG bar charts, with the same figures in a table
 * for screen readers. Drawn by hand: two bar series do not justify a charting library's weight.
 */
export function DayChart({ days }: { days: UsageDay[] }) {
  return (
    <figure class="chart">
      <figcaption>Last {days.length} days (UTC): agent spend and billed requests per day</figcaption>
      <Bars days={days} value={(d) => d.spend_usd} label="Spend (USD)" format={usd} cls="bar-spend" />
      <Bars days={days} value={(d) => d.requests} label="Billed requests" format={String} cls="bar-requests" />
      <details>
        <summary>Figures as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Spend</th>
              <th scope="col">Agent steps</th>
              <th scope="col">Paid tool calls</th>
              <th scope="col">Images</th>
              <th scope="col">Lookups</th>
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.day}>
                <th scope="row">{d.day}</th>
                <td>{usd(d.spend_usd)}</td>
                <td>{d.agent_steps}</td>
                <td>{d.tool_calls}</td>
                <td>{d.units.images}</td>
                <td>{d.units.lookups}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

function Bars({ days, value, label, format, cls }: { days: UsageDay[]; value: (d: UsageDay) => number; label: string; format: (n: number) => string; cls: string }) {
  const W = 600;
  const H = 90;
  const max = Math.max(...days.map(value), 0);
  const bw = W / Math.max(days.length, 1);
  const total = days.reduce((n, d) => n + value(d), 0);
  return (
    <div class="bars">
      <div class="bars-head">
        {label}: {format(total)} in total, at most {format(max)} a day
      </div>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${label} per day, ${format(total)} in total`} preserveAspectRatio="none">
        {days.map((d, i) => {
          const h = max > 0 ? (value(d) / max) * (H - 4) : 0;
          return (
            <rect key={d.day} class={cls} x={i * bw + 1} y={H - h} width={Math.max(bw - 2, 1)} height={h}>
              <title>{`${d.day}: ${format(value(d))}`}</title>
            </rect>
          );
        })}
        <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} class="axis" />
      </svg>
    </div>
  );
}
