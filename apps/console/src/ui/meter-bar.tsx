/** A used-of-allowance bar; held units drawn after the used ones. */
export function MeterBar({ label, used, held = 0, total, detail }: { label: string; used: number; held?: number; total: number; detail?: string }) {
  const pct = (n: number) => (total > 0 ? Math.min(100, (n / total) * 100) : 0);
  const id = `meter-${label.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <div class="meter">
      <div class="meter-head">
        <span id={id}>{label}</span>
        <span>
          {used}
          {held ? ` (+${held} held)` : ''} of {total}
        </span>
      </div>
      <div class="meter-track" role="meter" aria-labelledby={id} aria-valuemin={0} aria-valuemax={total} aria-valuenow={Math.min(used + held, total)}>
        <div class="meter-used" style={{ width: `${pct(used)}%` }} />
        <div class="meter-held" style={{ width: `${pct(held)}%` }} />
      </div>
      {detail && <div class="meter-detail">{detail}</div>}
    </div>
  );
}
