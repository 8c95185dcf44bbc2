import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getDevice, type Db, type Device } from '@fleet/db';
import { faultClasses, jobKindTable } from '@fleet/domain';
import { jobOrApprovalAccepted, sendOutcome } from '../approvals/views.js';
import type { RemediationConfig, TwoPersonConfig } from '../config.js';
import { ApiError, notFound } from '../errors.js';
import { IdParam } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { callerOf } from '../services/caller.js';
import { requestGate } from '../services/approvals.service.js';
import { quarantineDevice, releaseDevice } from '../services/remediation.service.js';
import { jobAccepted, jobView, type ViewContext } from '../views.js';

const reason = z.string().trim().min(1, 'give a reason').max(2000).describe('Kept in the audit log and device history');

const QuarantineBody = z
  .object({
    reason,
    remediate: z.boolean().default(false).describe("Also run the fault's playbook once held"),
    fault_class: z
      .enum(faultClasses)
      .optional()
      .describe("The fault to remediate; the device's last observed fault when absent"),
  })
  .strict();
const RemediateBody = z.object({ reason, fault_class: QuarantineBody.shape.fault_class }).strict();
const ReleaseBody = z.object({ reason }).strict();

/** Quarantine, remediation and release of a device (docs/day2.md). */
export function remediationRoutes(
  app: FastifyInstance,
  doc: ApiDoc,
  db: Db,
  views: ViewContext,
  config: RemediationConfig,
  twoPerson: TwoPersonConfig,
): void {
  const deviceOrThrow = async (id: string): Promise<Device> => {
    const device = await getDevice(db, id);
    if (!device) throw notFound('device', id);
    if (device.deletedAt)
      throw new ApiError('FAILED_PRECONDITION', `device ${device.name} was deleted from the inventory`);
    return device;
  };

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/quarantine',
      tag: 'health',
      summary:
        'Hold a device (intent): campaigns, batches, rack sequences and enrolment leave it alone until it is ' +
        "released; with `remediate`, also run its fault's playbook. 409 when it is held already, at the vendor or " +
        'decommissioned',
      role: jobKindTable['device.quarantine'].role,
      sites: 'scoped',
      params: IdParam,
      body: QuarantineBody,
      success: jobAccepted('The quarantine (or remediation) job'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const job = await quarantineDevice(db, callerOf(request), config, await deviceOrThrow(params.id), {
        reason: body.reason,
        remediate: body.remediate,
        faultClass: body.fault_class,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/remediate',
      tag: 'health',
      summary:
        "Run the playbook of a device's fault (intent): held first if it is not, then each step verified by fresh " +
        'health readings; the first step that clears the fault returns the device where it was, and a playbook that ' +
        'runs out opens an RMA case',
      role: jobKindTable['device.remediate'].role,
      sites: 'scoped',
      params: IdParam,
      body: RemediateBody,
      success: jobAccepted('The remediation job, its steps in the timeline'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const job = await quarantineDevice(db, callerOf(request), config, await deviceOrThrow(params.id), {
        reason: body.reason,
        remediate: true,
        faultClass: body.fault_class,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/release',
      tag: 'health',
      summary:
        'Let a quarantined device go (intent): a health check, then back where it was before the quarantine; held ' +
        'again, the job failed and naming the faults, if the check does not pass. Two-person rule device.release',
      role: jobKindTable['device.release'].role,
      sites: 'scoped',
      params: IdParam,
      body: ReleaseBody,
      success: jobOrApprovalAccepted('The release job'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const out = await releaseDevice(db, callerOf(request), requestGate(twoPerson), {
        device_id: params.id,
        reason: body.reason,
      });
      return sendOutcome(reply, out, views);
    },
  );
}
