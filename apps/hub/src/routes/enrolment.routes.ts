import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  getDevice,
  getDeviceHardware,
  getRack,
  rackDevices,
  type Db,
  type Device,
  type DeviceHardwareRow,
} from '@fleet/db';
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

const optionalText = z.string().nullable();
const optionalCount = z.number().nullable();

const HardwareView = z
  .object({
    device_id: z.uuid(),
    job_id: z.uuid().nullable(),
    read_at: timestamp,
    digest: z.string().describe('sha256 of the canonical Redfish document (GET /v1/devices/{id}/hardware/document)'),
    document_bytes: z.number().int(),
    document_resources: z.number().int().describe('Redfish resources the read used'),
    serial_number: optionalText,
    netbox_serial: optionalText,
    serial_matches_netbox: z.boolean().nullable(),
    manufacturer: optionalText,
    model: optionalText,
    sku: optionalText,
    part_number: optionalText,
    asset_tag: optionalText,
    bios_version: optionalText,
    cpu_count: optionalCount,
    gpu_count: optionalCount,
    memory_gib: optionalCount.describe('Host memory'),
    gpu_memory_gib: optionalCount.describe('HBM over all GPUs'),
    parts: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        model: optionalText,
        part_number: optionalText,
        serial_number: optionalText,
      }),
    ),
    nics: z.number().int(),
    firmware_components: z.number().int(),
    nvlink_ports: z.number().int(),
    location: z
      .object({ rack: optionalText, slot: z.number().int().nullable() })
      .nullable()
      .describe('The rack chassis serial and slot the tray reports (MNNVLink topology); null for a power shelf'),
    differences: z
      .array(
        z.object({
          code: z.string(),
          subject: z.string(),
          expected: optionalText,
          actual: optionalText,
          message: z.string(),
        }),
      )
      .describe("How the hardware differs from its node type's expected profile; empty when it matches"),
  })
  .meta({ id: 'DeviceHardware' });

/** The stored record as the API shows it: snake_case, absent values as null. */
function hardwareView(device: Device, hw: DeviceHardwareRow): z.infer<typeof HardwareView> {
  const r = hw.record;
  const or = <T>(v: T | undefined) => v ?? null;
  return {
    device_id: device.id,
    job_id: hw.jobId,
    read_at: hw.readAt.toISOString(),
    digest: hw.digest,
    document_bytes: r.document.bytes,
    document_resources: r.document.resources,
    serial_number: hw.serialNumber,
    netbox_serial: device.serial,
    serial_matches_netbox: device.serial && hw.serialNumber ? device.serial === hw.serialNumber : null,
    manufacturer: or(r.manufacturer),
    model: or(r.model),
    sku: or(r.sku),
    part_number: or(r.partNumber),
    asset_tag: or(r.assetTag),
    bios_version: or(r.biosVersion),
    cpu_count: or(r.cpuCount),
    gpu_count: or(r.gpuCount),
    memory_gib: or(r.memoryGiB),
    gpu_memory_gib: or(r.gpuMemoryGiB),
    parts: r.parts.map((p) => ({
      id: p.id,
      kind: p.kind,
      model: or(p.model),
      part_number: or(p.partNumber),
      serial_number: or(p.serialNumber),
    })),
    nics: r.nics,
    firmware_components: r.firmwareComponents,
    nvlink_ports: r.nvlinkPorts,
    location: r.location ? { rack: or(r.location.rack), slot: or(r.location.slot) } : null,
    differences: r.differences.map((d) => ({
      code: d.code,
      subject: d.subject,
      expected: or(d.expected),
      actual: or(d.actual),
      message: d.message,
    })),
  };
}

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
      sites: 'scoped',
      params: IdParam,
      success: jobAccepted('The enrolment job: a child per device, the stage timeline, decisions it waits for'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params }) => {
      const rack = await getRack(db, params.id);
      if (!rack) throw notFound('rack', params.id);
      const devices = (await rackDevices(db, rack.id)).filter((d) => !d.deletedAt);
      if (devices.length === 0) throw new ApiError('FAILED_PRECONDITION', `rack ${rack.name} has no devices`);
      await checkCanEnrol(db, devices);
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

  const deviceJob = (kind: 'device.enrol' | 'device.burn_in', check: (d: Device) => Promise<void>, summary: string) =>
    defineRoute(
      app,
      doc,
      {
        method: 'POST',
        url: kind === 'device.enrol' ? '/v1/devices/:id/enrol' : '/v1/devices/:id/burn-in',
        tag: 'lifecycle',
        summary,
        role: jobKindTable[kind].role,
        sites: 'scoped',
        params: IdParam,
        success: jobAccepted('The job, with its stage timeline'),
        errors: [400, 404, 409],
      },
      async ({ request, reply, params }) => {
        const device = await deviceOrThrow(params.id);
        await check(device);
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
    (d) => checkCanEnrol(db, [d]),
    'Enrol one device (intent): the rack enrolment without the topology check; a compute tray ends certified, a ' +
      'switch tray or power shelf enrolled (they are burned in with their rack). 409 unless discovered or failed',
  );
  deviceJob(
    'device.burn_in',
    (d) => checkCanBurnIn(db, d),
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
      sites: 'scoped',
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
      sites: 'scoped',
      params: IdParam,
      success: { status: 200, description: 'The hardware record', body: HardwareView },
      errors: [404],
    },
    async ({ params }) => {
      const device = await getDevice(db, params.id);
      if (!device) throw notFound('device', params.id);
      const hw = await getDeviceHardware(db, device.id);
      if (!hw) throw new ApiError('NOT_FOUND', `device ${device.name} has no hardware read yet: enrol it`);
      return hardwareView(device, hw);
    },
  );
}
