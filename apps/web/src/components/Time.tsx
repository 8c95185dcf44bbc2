const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size || unit === 'second') return relative.format(Math.round(seconds / size), unit);
  }
  return iso;
}

/** ISO without the T and milliseconds, in UTC: what operators paste into tickets. */
export function absoluteTime(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A time shown both ways: relative ("2 minutes ago") and absolute (UTC). */
export function Time({ iso, compact = false }: { iso: string | null | undefined; compact?: boolean }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <span className="time">
      <time dateTime={iso} title={absoluteTime(iso)}>
        {relativeTime(iso)}
      </time>
      {!compact && <span className="muted"> · {absoluteTime(iso)}</span>}
    </span>
  );
}

export function duration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}
