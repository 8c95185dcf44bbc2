import { z } from 'zod';
import { invalid } from './errors.js';

export const limitSchema = z.coerce.number().int().min(1).max(1000).default(100);

/** Opaque keyset cursors: base64url of the last row's sort key; an empty one is the first page. */
export function encodeCursor(key: unknown[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor<T extends z.ZodType>(cursor: string | undefined, shape: T): z.infer<T> | undefined {
  if (!cursor) return undefined;
  try {
    const parsed = shape.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // falls through to the error below
  }
  throw invalid('query.cursor', 'malformed cursor; pass the next_cursor of a previous page unchanged');
}

/** A query parameter given once or repeated (`?state=a&state=b`), as a list. */
export const repeated = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]), z.array(item).optional());

/** Of `limit + 1` rows, the page (the first `limit`) and the cursor after its last row; null on the last page. */
export function cursorPage<R>(
  rows: R[],
  limit: number,
  keyOf: (last: R) => unknown[],
): { page: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(keyOf(last)) : null };
}
