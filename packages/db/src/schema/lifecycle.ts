import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  check,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import {
  axisTable,
  conditionStatuses,
  conditionTypes,
  deviceAxes,
  reasonPatternSql,
  type AxisWriter,
  type ConditionStatus,
  type ConditionType,
  type DeviceAxis,
  type HardwareRecord,
} from '@fleet/domain';
import { sqlList, updatedAt } from './_columns.js';
import { devices } from './inventory.js';

/** (axis, writer) pairs of the axis table, as an SQL list of rows: the database refuses any other writer too. */
const axisWriterPairs = sql.raw(`(${deviceAxes.map((a) => `('${a}', '${axisTable[a].writer}')`).join(', ')})`);

/** Kubernetes-style conditions: one row per device and type (docs/lifecycle.md). */
export const deviceConditions = pgTable(
  'device_conditions',
  {
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    type: text('type').$type<ConditionType>().notNull(),
    status: text('status').$type<ConditionStatus>().notNull(),
    reason: text('reason').notNull(),
    message: text('message').notNull().default(''),
    /** Moves only when status changes. */
    lastTransitionTime: timestamp('last_transition_time', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
    observedGeneration: bigint('observed_generation', { mode: 'number' }).notNull().default(0),
    /** The last report, whether or not it changed anything. */
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.deviceId, t.type] }),
    // The device list's condition filter (`condition=BurnInPassed=False`): the few devices in a status, without
    // probing every device's conditions.
    index('device_conditions_type_status_device_id_idx').on(t.type, t.status, t.deviceId),
    check('device_conditions_type_check', sql`${t.type} in ${sqlList(conditionTypes)}`),
    check('device_conditions_status_check', sql`${t.status} in ${sqlList(conditionStatuses)}`),
    check('device_conditions_reason_check', sql`${t.reason} ~ ${sql.raw(`'${reasonPatternSql}'`)}`),
  ],
);

/**
 * The history of a device's axes: one row per lifecycle move and per condition status change, written in the
 * transaction that made it. Rows are never updated.
 */
export const deviceTransitions = pgTable(
  'device_transitions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    axis: text('axis').$type<DeviceAxis>().notNull(),
    /** Set for a condition's status change; null for a move of the axis itself. */
    conditionType: text('condition_type').$type<ConditionType>(),
    /** Null when the value first appeared (a new condition). */
    fromState: text('from_state'),
    toState: text('to_state').notNull(),
    writer: text('writer').$type<AxisWriter>().notNull(),
    /** The job (and Temporal workflow) that made the change, if any; like audit_log, not a foreign key. */
    jobId: uuid('job_id'),
    reason: text('reason').notNull(),
    message: text('message'),
    at: timestamp('at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // A device's history, newest first by id, with or without an axis filter.
    index('device_transitions_device_id_id_idx').on(t.deviceId, t.id),
    index('device_transitions_job_id_idx').on(t.jobId),
    // A device's last lifecycle move (when it entered its state, in every device read), one probe however many
    // condition changes came after it.
    index('device_transitions_lifecycle_device_id_id_idx')
      .on(t.deviceId, t.id)
      .where(sql`${t.axis} = 'lifecycle' and ${t.conditionType} is null`),
    check('device_transitions_axis_writer_check', sql`(${t.axis}, ${t.writer}) in ${axisWriterPairs}`),
    check(
      'device_transitions_condition_type_check',
      sql`${t.conditionType} is null or ${t.conditionType} in ${sqlList(conditionTypes)}`,
    ),
    check('device_transitions_reason_check', sql`${t.reason} ~ ${sql.raw(`'${reasonPatternSql}'`)}`),
  ],
);

export type DeviceConditionRow = typeof deviceConditions.$inferSelect;
export type DeviceTransitionRow = typeof deviceTransitions.$inferSelect;

/**
 * A device's hardware as its BMC last reported it over Redfish (docs/hardware-inventory.md), from an enrolment's read:
 * the parsed record and the digest of the Redfish document. NetBox stays the record of where the device is; where
 * the two disagree (the serial) the NetBox agent's pass raises an inventory issue.
 */
export const deviceHardware = pgTable(
  'device_hardware',
  {
    deviceId: uuid('device_id')
      .primaryKey()
      .references(() => devices.id, { onDelete: 'cascade' }),
    /** The job whose workflow read it; like audit_log, not a foreign key. */
    jobId: uuid('job_id'),
    readAt: timestamp('read_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
    /** sha256:<hex> of the canonical Redfish document. */
    digest: text('digest').notNull(),
    serialNumber: text('serial_number'),
    record: jsonb('record').notNull().$type<HardwareRecord>(),
    updatedAt: updatedAt(),
  },
  (t) => [index('device_hardware_serial_number_idx').on(t.serialNumber)],
);
export type DeviceHardwareRow = typeof deviceHardware.$inferSelect;
