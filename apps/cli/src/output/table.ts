import { createRequire } from 'node:module';
import type TableType from 'cli-table3';
import { cellText, type Column } from './format.js';

/** Loaded on the first table: commands printing JSON (scripts, `get devices` over a fleet) start faster without it. */
let Table: typeof TableType | undefined;
const loadTable = () => (Table ??= createRequire(import.meta.url)('cli-table3') as typeof TableType);

/** No borders, two spaces between columns, like kubectl. */
const plain = {
  chars: {
    top: '',
    'top-mid': '',
    'top-left': '',
    'top-right': '',
    bottom: '',
    'bottom-mid': '',
    'bottom-left': '',
    'bottom-right': '',
    left: '',
    'left-mid': '',
    mid: '',
    'mid-mid': '',
    right: '',
    'right-mid': '',
    middle: '  ',
  },
  style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
};

/** The widest a column grows from its first rows; longer cells in later pages are cut with an ellipsis. */
const maxColumnWidth = 60;

/**
 * A table printed a page at a time: the column widths come from the header and the first page, so nothing waits for
 * (or holds) the rest of the list.
 */
export class StreamingTable<T> {
  private widths: number[] | undefined;

  constructor(private readonly columns: Column<T>[]) {}

  /** The rows of one page as text (with the header before the first page). */
  render(items: T[]): string {
    const rows = items.map((item) => this.columns.map((c) => cellText(c.value(item))));
    const header = this.columns.map((c) => c.header);
    const first = !this.widths;
    this.widths ??= header.map((h, i) =>
      Math.min(maxColumnWidth, Math.max(h.length, ...rows.map((r) => displayWidth(r[i]!)))),
    );
    if (rows.length === 0 && !first) return '';
    const table = new (loadTable())({ ...plain, colWidths: this.widths, wordWrap: false });
    if (first) table.push(header);
    table.push(...rows);
    return (
      table
        .toString()
        .split('\n')
        .map((line) => line.trimEnd())
        .join('\n') + '\n'
    );
  }
}

/** Key/value lines (`Name:  value`) aligned on the longest key. */
export function fields(entries: [string, unknown][], indent = ''): string {
  const width = Math.max(0, ...entries.map(([k]) => k.length + 1));
  return entries.map(([k, v]) => `${indent}${`${k}:`.padEnd(width)}  ${cellText(v)}\n`).join('');
}

function displayWidth(text: string): number {
  return [...text].length;
}
