import { sql, type SQL } from 'drizzle-orm';
import { timestamp } from 'drizzle-orm/pg-core';

// Millisecond precision: keyset cursors carry JS Dates, which cannot hold microseconds.
export const createdAt = () =>
  timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow();
export const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const tsz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A constant list of strings as an SQL list for check constraints, e.g. `('a', 'b')`; values come from code. */
export const sqlList = (values: readonly string[]): SQL =>
  sql.raw(`(${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')})`);
