import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getDevice, type Db } from '@fleet/db';
import { inoperableReason, manifestsForTypes } from '../campaigns/planner.js';
import { ApiError, notFound } from '../errors.js';
import { OverrideQuarantine } from '../hold-override.js';
import { callerOf } from '../services/caller.js';
import { IdParam } from '../params.js';
import { jobKindTable } from '@fleet/domain';
import { defineRoute, type ApiDoc } from '../route.js';
import { createJob } from '../services/jobs.service.js';
import { jobAccepted, jobView, type ViewContext } from '../views.js';

const UpdateBody = z
  .object({
    /** Default: the default manifest of the device's node type. */
    manifest_id: z.string().uuid('must be a UUID').optional(),
    /** Push even components already at the manifest's version (and allow downgrades). */
    force: z.boolean().default(false),
    override_quarantine: OverrideQuarantine.optional(),
  })
  .strict();

export function deviceFirmwareRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
  const operableDevice = async (id: string) => {
    const device = await getDevice(db, id);
    if (!device) throw notFound('device', id);
    const reason = inoperableReason(device);
    if (reason)
      throw new ApiError(
        'FAILED_PRECONDITION',
        `device ${device.name} cannot be operated: ${reason}; see its inventory issues`,
      );
    return device;
  };

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/firmware-update',
      tag: 'firmware',
      summary:
        "Update one device's firmware to a manifest (intent): the given one or its node type's default " +
        '(409 when there is none); 409 when the device is busy, or held (quarantined, remediating, rma) unless ' +
        'override_quarantine gives a reason. Idempotency-Key honoured',
      role: jobKindTable['device.firmware_update'].role,
      sites: 'scoped',
      params: IdParam,
      body: UpdateBody,
      success: jobAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const device = await operableDevice(params.id);
      const type = device.nodeType!;
      const manifests = await manifestsForTypes(
        db,
        [type],
        body.manifest_id ? { [type]: body.manifest_id } : {},
        () => 'body.manifest_id',
      );
      const manifest = manifests.get(type);
      if (!manifest)
        throw new ApiError(
          'FAILED_PRECONDITION',
          `no default firmware manifest for ${type}; give manifest_id or set a default for the type`,
        );
      const { job } = await createJob(db, callerOf(request), {
        job: {
          kind: 'device.firmware_update',
          deviceId: device.id,
          siteId: device.siteId,
          params: { manifest_id: manifest.id, force: body.force },
        },
        action: 'device.firmware_update',
        target: `device/${device.id}`,
        overrideQuarantine: body.override_quarantine,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/firmware-refresh',
      tag: 'firmware',
      summary: 'Read the installed firmware versions from the device now (intent)',
      role: jobKindTable['device.firmware_refresh'].role,
      sites: 'scoped',
      params: IdParam,
      success: jobAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params }) => {
      const device = await operableDevice(params.id);
      const { job } = await createJob(db, callerOf(request), {
        job: { kind: 'device.firmware_refresh', deviceId: device.id, siteId: device.siteId, params: {} },
        action: 'device.firmware_refresh',
        target: `device/${device.id}`,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );
}
