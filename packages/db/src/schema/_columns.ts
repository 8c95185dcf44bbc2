import { timestamp } from 'drizzle-orm/pg-core';

// Millisecond precision: keyset cursors carry JS Dates, which cannot hold microseconds.
export const createdAt = () =>
  timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow();
export const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const tsz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
