import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getRmaCase, listRmaCases, type Db, type RmaCase } from '@fleet/db';
import { nextRmaStates, rmaStates } from '@fleet/domain';
import { notFound } from '../errors.js';
import { cursorPage, decodeCursor, limitSchema, repeated } from '../pagination.js';
import { IdParam, uuid } from '../params.js';
import { scopedSiteFilter } from '../services/site-scope.js';
import { defineRoute, sendCreated, type ApiDoc } from '../route.js';
import { callerOf } from '../services/caller.js';
import { openCase, patchCase } from '../services/rma.service.js';
import { siteId } from '../validation.js';
import { JobView, jobView, pageOf, timestamp, type ViewContext } from '../views.js';

const serials = z.record(z.string(), z.string()).describe('Part id (GPU_2, PSU_3; tray for the device) → serial');

const RmaView = z
  .object({
    id: z.uuid(),
    device_id: z.uuid(),
    site_id: z.string(),
    state: z.enum(rmaStates),
    operator_moves: z.array(z.enum(rmaStates)).describe('The states an operator may move the case to now'),
    failed_part: z.string(),
    fault_class: z.string().nullable().describe("The health observation's fault class, for an escalated remediation"),
    reason: z.string(),
    vendor_case_id: z.string().nullable(),
    opened_by: z.string().describe('The operator, or remediation for an escalation'),
    job_id: z.uuid().nullable().describe('The remediation job whose escalation opened it'),
    old_serials: serials.describe('From the last hardware read when the case opened; empty without one'),
    new_serials: serials.nullable().describe('From the read that revalidated the device, once closed after a return'),
    swap: z
      .array(z.object({ part: z.string(), old: z.string().nullable(), new: z.string().nullable() }))
      .nullable()
      .describe('The parts whose serial changed; empty when none did or nothing was read before the case opened'),
    history: z.array(
      z.object({
        from: z.enum(rmaStates).nullable(),
        to: z.enum(rmaStates),
        at: timestamp,
        by: z.string(),
        reason: z.string(),
        job_id: z.uuid().nullable(),
      }),
    ),
    created_at: timestamp,
    updated_at: timestamp,
    closed_at: timestamp.nullable(),
  })
  .meta({ id: 'RmaCase' });
const RmaPage = pageOf(RmaView, 'RmaCasePage');
const RmaChangeView = RmaView.extend({
  job: JobView.nullable().describe('The job the change started: shipping (device.rma_ship) or return'),
}).meta({ id: 'RmaCaseChange' });

function rmaView(c: RmaCase): z.infer<typeof RmaView> {
  return {
    id: c.id,
    device_id: c.deviceId,
    site_id: c.siteId,
    state: c.state,
    operator_moves: nextRmaStates(c.state, 'operator'),
    failed_part: c.failedPart,
    fault_class: c.faultClass,
    reason: c.reason,
    vendor_case_id: c.vendorCaseId,
    opened_by: c.openedBy,
    job_id: c.jobId,
    old_serials: c.oldSerials,
    new_serials: c.newSerials,
    swap: c.swap,
    history: c.history.map((h) => ({
      from: h.from,
      to: h.to,
      at: h.at,
      by: h.by,
      reason: h.reason,
      job_id: h.jobId ?? null,
    })),
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
    closed_at: c.closedAt?.toISOString() ?? null,
  };
}

const RmaQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    state: repeated(z.enum(rmaStates)),
    site_id: repeated(siteId),
    device_id: repeated(uuid).describe("A device's cases, its RMA history"),
  })
  .strict();

const text = (max: number) => z.string().trim().min(1).max(max);

const NewRma = z
  .object({
    device_id: uuid,
    failed_part: text(200).describe('The part to send back (GPU_2, PSU_3, tray)'),
    reason: text(2000),
    vendor_case_id: text(200).optional(),
  })
  .strict();

const RmaPatch = z
  .object({
    state: z
      .enum(rmaStates)
      .optional()
      .describe('shipped starts device.rma_ship; replaced starts device.rma_return; closed from open: nothing shipped'),
    vendor_case_id: text(200).nullable().optional().describe('null clears it'),
    reason: text(2000).optional().describe('Required with a state change; kept in the history and the job'),
  })
  .strict()
  .refine((b) => b.state !== undefined || b.vendor_case_id !== undefined, {
    message: 'send state or vendor_case_id',
  });

/**
 * RMA cases (docs/day2.md, "RMA"): opened by a remediation that ran out of steps or by an operator, shipped and taken
 * back by the operator (each through the device's job), revalidated and closed by the device's enrolment.
 */
export function rmaRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/rma',
      tag: 'rma',
      summary: 'RMA cases, newest first: by state, site, device (a device_id lists its RMA history)',
      role: 'viewer',
      sites: 'scoped',
      query: RmaQuery,
      success: { status: 200, description: 'Cases, newest first', body: RmaPage },
      errors: [400],
    },
    async ({ request, query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.iso.datetime(), uuid]));
      const rows = await listRmaCases(db, {
        limit: q.limit + 1,
        ...(after ? { after: { createdAt: new Date(after[0]), id: after[1] } } : {}),
        state: q.state,
        siteId: scopedSiteFilter(request.actor!, q.site_id, 'query.site_id'),
        deviceId: q.device_id,
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.createdAt.toISOString(), last.id]);
      return { items: page.map(rmaView), next_cursor: nextCursor };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/rma/:id',
      tag: 'rma',
      summary: 'One RMA case with its history, and once closed the serials read after the return and the swap',
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      success: { status: 200, description: 'The case', body: RmaView },
    },
    async ({ params }) => {
      const c = await getRmaCase(db, params.id);
      if (!c) throw notFound('RMA case', params.id);
      return rmaView(c);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/rma',
      tag: 'rma',
      summary:
        "Open an RMA case for a device by hand, with the serials of its last hardware read. 409 while the device's " +
        'last case is not closed, or for a deleted or decommissioned device',
      role: 'operator',
      sites: 'scoped',
      body: NewRma,
      success: { status: 201, description: 'The case, open', body: RmaView, headers: ['Location'] },
      errors: [409],
    },
    async ({ request, reply, body }) => {
      const created = await openCase(
        db,
        callerOf(request),
        {
          deviceId: body.device_id,
          failedPart: body.failed_part,
          reason: body.reason,
          vendorCaseId: body.vendor_case_id,
        },
        rmaView,
      );
      return sendCreated(reply, created);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'PATCH',
      url: '/v1/rma/:id',
      tag: 'rma',
      summary:
        'Change a case: its vendor case id, or its state (with a reason). shipped (from open, or from revalidating ' +
        'when the return failed) starts device.rma_ship on a quarantined, failed or remediating device; replaced ' +
        'starts device.rma_return (rma → discovered), after which enrolling the device revalidates the case and ' +
        'certifying it closes it. 409 for a move the case or the device cannot make; the state it is in changes ' +
        'nothing',
      role: 'operator',
      sites: 'scoped',
      params: IdParam,
      body: RmaPatch,
      success: { status: 200, description: 'The case; no job started', body: RmaChangeView },
      alsoSucceeds: [{ status: 202, description: 'The case and the job it started', body: RmaChangeView }],
      errors: [409],
    },
    async ({ request, reply, params, body }) => {
      const { rmaCase, job } = await patchCase(db, callerOf(request), params.id, {
        state: body.state,
        vendorCaseId: body.vendor_case_id,
        reason: body.reason,
      });
      const answer = { ...rmaView(rmaCase), job: job ? jobView(job, views) : null };
      if (!job) return answer;
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(answer);
    },
  );
}
