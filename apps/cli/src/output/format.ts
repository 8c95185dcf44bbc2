import { UsageError } from '../exit-codes.js';

/**
 * How a command prints what it got. `json` and `yaml` are the hub's objects unchanged (lists as `{items: [...]}`),
 * so scripts can rely on them; `jsonl` is one object per line; `id` one ID per line; `table` and `wide` are for
 * people and may change.
 */
export const outputFormats = ['table', 'wide', 'json', 'yaml', 'jsonl', 'id'] as const;
export type OutputFormat = (typeof outputFormats)[number];

export function parseOutputFormat(value: string): OutputFormat {
  if ((outputFormats as readonly string[]).includes(value)) return value as OutputFormat;
  throw new UsageError(`-o ${value}: expected one of ${outputFormats.join(', ')}`);
}

/** A column of a table: its header, how to read the cell from an item, and whether only `-o wide` shows it. */
export interface Column<T> {
  header: string;
  value: (item: T) => unknown;
  wide?: boolean;
}

export function columnsFor<T>(columns: Column<T>[], format: OutputFormat): Column<T>[] {
  return format === 'wide' ? columns : columns.filter((c) => !c.wide);
}

/** A cell as text: empty values as `-`, lists joined, objects as compact JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length ? value.map(cellText).join(',') : '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `5s`, `3m`, `2h`, `4d` since an ISO timestamp, like kubectl's AGE. */
export function age(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '-';
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
