import { Badge } from './Status';

/** Counts of a list by one field, as a small table (value, count), most frequent first. */
export function CountTable<T>({
  caption,
  items,
  by,
  badge = false,
}: {
  caption: string;
  items: readonly T[];
  by: (item: T) => string | null | undefined;
  badge?: boolean;
}) {
  const counts = new Map<string, number>();
  for (const item of items) {
    const key = by(item) ?? '—';
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return <CountsFromMap caption={caption} counts={Object.fromEntries(counts)} badge={badge} />;
}

export function CountsFromMap({
  caption,
  counts,
  badge = false,
}: {
  caption: string;
  counts: Record<string, number>;
  badge?: boolean;
}) {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return (
    <table className="counts">
      <caption>{caption}</caption>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={2} className="muted">
              none
            </td>
          </tr>
        )}
        {rows.map(([value, count]) => (
          <tr key={value}>
            <th scope="row">{badge ? <Badge value={value} /> : value}</th>
            <td className="num">{count}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
