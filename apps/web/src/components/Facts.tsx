import type { ReactNode } from 'react';

/** Label → value rows; a missing value shows as a dash. */
export type FactRows = [string, ReactNode][];

/** A definition list of facts about one object (identity, hardware). */
export function Facts({ rows }: { rows: FactRows }) {
  return (
    <dl className="facts">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v ?? <span className="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}
