import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { HealthFault } from '@fleet/domain';
import { devices } from './inventory.js';

/**
 * The last health reading the site's observer delivered per device (docs/day2.md): what it saw, when, and since when
 * it has said so. Its conditions (BMCReachable, CredentialsVerified, Healthy) are in device_conditions.
 */
export const deviceHealth = pgTable(
  'device_health',
  {
    deviceId: uuid('device_id')
      .primaryKey()
      .references(() => devices.id, { onDelete: 'cascade' }),
    reachable: boolean('reachable').notNull(),
    credentialsOk: boolean('credentials_ok'),
    powerState: text('power_state'),
    faults: jsonb('faults').$type<HealthFault[]>().notNull().default([]),
    /** The reading's time at the satellite; a delivery older than this is ignored. */
    observedAt: timestamp('observed_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
    /** When the reading last said something different. */
    changedAt: timestamp('changed_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
    /** Deliveries in a row that said the same: a faulty reading is delivered once per cycle until confirmed. */
    observations: integer('observations').notNull().default(1),
  },
  // The devices with a fault now, for the console and the rules, without reading every device's row.
  (t) => [
    index('device_health_faulty_idx')
      .on(t.changedAt)
      .where(sql`jsonb_array_length(${t.faults}) > 0`),
  ],
);

export type DeviceHealthRow = typeof deviceHealth.$inferSelect;
