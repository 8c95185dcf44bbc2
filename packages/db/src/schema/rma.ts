import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { rmaStates, type RmaMove, type RmaState, type RmaSwap } from '@fleet/domain';
import { createdAt, sqlList, updatedAt } from './_columns.js';
import { devices } from './inventory.js';

/**
 * RMA cases (docs/day2.md, "RMA"): a device's failed part at its vendor, from the opening (a remediation that ran out
 * of steps, or an operator) to the device's revalidation, with the serials before and after and the swap between.
 */
export const rmaCases = pgTable(
  'rma_cases',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    /** The device's site when the case opened, for the list's filter. */
    siteId: text('site_id').notNull(),
    state: text('state').$type<RmaState>().notNull().default('open'),
    /** The component the fault names (GPU_2, PSU_3), or what the operator wrote. */
    failedPart: text('failed_part').notNull(),
    /** The health observation's fault class; no check, so a class added later never fails a projection. */
    faultClass: text('fault_class'),
    reason: text('reason').notNull(),
    vendorCaseId: text('vendor_case_id'),
    openedBy: text('opened_by').notNull(),
    /** The remediation job whose escalation opened it; like audit_log, not a foreign key. */
    jobId: uuid('job_id'),
    /** Serials of the device's last hardware read when the case opened (part id → serial); empty without one. */
    oldSerials: jsonb('old_serials').$type<Record<string, string>>().notNull().default({}),
    /** Serials of the read that revalidated it, when it closed after a return. */
    newSerials: jsonb('new_serials').$type<Record<string, string>>(),
    swap: jsonb('swap').$type<RmaSwap[]>(),
    /** Every move, oldest first, the opening included. */
    history: jsonb('history').$type<RmaMove[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    closedAt: timestamp('closed_at', { withTimezone: true, mode: 'date', precision: 3 }),
  },
  (t) => [
    // One case at a time per device: the escalation opens nothing while one is open.
    uniqueIndex('rma_cases_one_open_per_device')
      .on(t.deviceId)
      .where(sql`${t.state} <> 'closed'`),
    // A remediation's escalation projected twice opens one case.
    uniqueIndex('rma_cases_job_id_unique')
      .on(t.jobId)
      .where(sql`${t.jobId} is not null`),
    // GET /v1/rma pages newest first; a device's cases.
    index('rma_cases_created_at_id_idx').on(t.createdAt, t.id),
    index('rma_cases_device_id_idx').on(t.deviceId),
    check('rma_cases_state_check', sql`${t.state} in ${sqlList(rmaStates)}`),
    check('rma_cases_closed_at_check', sql`(${t.state} = 'closed') = (${t.closedAt} is not null)`),
  ],
);

export type RmaCase = typeof rmaCases.$inferSelect;
