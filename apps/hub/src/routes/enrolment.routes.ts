import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getDevice, getDeviceHardware, getRack, rackDevices, type Db, type Device } from '@fleet/db';
import { decisionActions, jobKindTable } from '@fleet/domain';
import { ApiError, notFound } from '../errors.js';
import { IdParam } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { callerOf } from '../services/caller.js';
import { checkCanBurnIn, checkCanEnrol, decide } from '../services/enrolment.service.js';
import { createJob } from '../services/jobs.service.js';
import { createParentJob } from '../services/parent-jobs.service.js';
import { timestamp, jobAccepted, jobView, type ViewContext } from '../views.js';

const DecisionBody = z
  .object({
    action: z.enum(decisionActions).describe('retry the stage, skip it (admin only), or reject the devices'),
    reason: z.string().trim().min(1, 'give a reason').max(2000).describe('Kept in the timeline and device history'),
    device_ids: z
      .array(z.uuid('must be a UUID'))
      .min(1)
      .max(10_000)
      .optional()
      .describe('The waiting devices it applies to; all of them when absent'),
  })
  .strict();

const HardwareView = z
  .object({
    device_id: z.uuid(),
    job_id: z.uuid().nullable(),
    read_at: timestamp,
    digest: z.string().describe('sha256 of the canonical Redfish document the record was parsed from'),
    serial_number: z.string().nullable(),
    netbox_serial: z.string().nullable(),
    serial_matches_netbox: z.boolean().nullable(),
    record: z.record(z.string(), z.unknown()).describe('Identity, summaries, parts, NICs and profile differences'),
  })
  .meta({ id: 'DeviceHardware' });

/** Enrolment, burn-in and the decisions a failed stage waits for (docs/enrolment.md). */
export function enrolmentRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
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
      url: '/v1/racks/:id/enrol',
      tag: 'lifecycle',
      summary:
        'Enrol a rack as a unit (intent): BMCs reachable, credentials, Redfish inventory, profile, NVLink topology, ' +
        'firmware baseline, burn-in, certified. Every device must be discovered or failed (409 naming those that ' +
        'are not); one rack sequence or enrolment per rack',
      role: jobKindTable['rack.enrol'].role,
      params: IdParam,
      success: jobAccepted('The enrolment job: a child per device, the stage timeline, decisions it waits for'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params }) => {
      const rack = await getRack(db, params.id);
      if (!rack) throw notFound('rack', params.id);
      const devices = (await rackDevices(db, rack.id)).filter((d) => !d.deletedAt);
      if (devices.length === 0) throw new ApiError('FAILED_PRECONDITION', `rack ${rack.name} has no devices`);
      checkCanEnrol(devices);
      const { job } = await createParentJob(db, callerOf(request), {
        parent: { kind: 'rack.enrol', siteId: rack.siteId, rackId: rack.id, params: {} },
        devices,
        childParams: () => ({ enrolment: 'rack' }),
        allOrNothing: true,
        childWorkflows: false,
        action: 'rack.enrol',
        target: `rack/${rack.id}`,
        childKind: 'device.enrol',
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  const deviceJob = (kind: 'device.enrol' | 'device.burn_in', check: (d: Device) => void, summary: string) =>
    defineRoute(
      app,
      doc,
      {
        method: 'POST',
        url: kind === 'device.enrol' ? '/v1/devices/:id/enrol' : '/v1/devices/:id/burn-in',
        tag: 'lifecycle',
        summary,
        role: jobKindTable[kind].role,
        params: IdParam,
        success: jobAccepted('The job, with its stage timeline'),
        errors: [400, 404, 409],
      },
      async ({ request, reply, params }) => {
        const device = await deviceOrThrow(params.id);
        check(device);
        const { job } = await createJob(db, callerOf(request), {
          job: { kind, siteId: device.siteId, deviceId: device.id, rackId: device.rackId, params: {} },
          action: kind,
          target: `device/${device.id}`,
        });
        return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
      },
    );
  deviceJob(
    'device.enrol',
    (d) => checkCanEnrol([d]),
    'Enrol one device (intent): the rack enrolment without the topology check; a compute tray ends certified, a ' +
      'switch tray or power shelf enrolled (they are burned in with their rack). 409 unless discovered or failed',
  );
  deviceJob(
    'device.burn_in',
    checkCanBurnIn,
    "Burn a compute tray in on the site's SLURM (intent): enrolled or certified → burning_in → certified, or a " +
      'decision when a test fails. 409 in any other state; 400 for a device that is not a compute tray',
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/jobs/:id/decision',
      tag: 'lifecycle',
      summary:
        'Answer a failed stage an enrolment or burn-in waits at: retry it, skip it with a reason (admin only), or ' +
        'reject the devices (they move to failed, the rest go on). 409 when the job waits for no decision',
      role: 'operator',
      params: IdParam,
      body: DecisionBody,
      success: jobAccepted('The job as it is; the decision reaches its workflow through the workflow agent'),
      errors: [400, 403, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const job = await decide(db, callerOf(request), params.id, {
        action: body.action,
        reason: body.reason,
        deviceIds: body.device_ids,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/devices/:id/hardware',
      tag: 'lifecycle',
      summary:
        "The device's hardware as its BMC last reported it over Redfish (read by an enrolment), and whether its " +
        "serial matches NetBox's; 404 before any read",
      role: 'viewer',
      params: IdParam,
      success: { status: 200, description: 'The hardware record', body: HardwareView },
      errors: [404],
    },
    async ({ params }) => {
      const device = await getDevice(db, params.id);
      if (!device) throw notFound('device', params.id);
      const hw = await getDeviceHardware(db, device.id);
      if (!hw) throw new ApiError('NOT_FOUND', `device ${device.name} has no hardware read yet: enrol it`);
      return {
        device_id: device.id,
        job_id: hw.jobId,
        read_at: hw.readAt.toISOString(),
        digest: hw.digest,
        serial_number: hw.serialNumber,
        netbox_serial: device.serial,
        serial_matches_netbox: device.serial && hw.serialNumber ? device.serial === hw.serialNumber : null,
        record: hw.record as unknown as Record<string, unknown>,
      };
    },
  );
}
