import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getDevice, getFirmwarePackage, type Db } from '@fleet/db';
import { isNvosImage, missingForNvos } from '@fleet/domain';
import { ApiError, invalid, notFound } from '../errors.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { createJob } from '../services/jobs.service.js';
import { jobView, type ViewContext } from '../views.js';

const uuid = z.string().uuid('must be a UUID');

/** Switch trays' NVOS: image installs (the Redfish side of a switch is in the power and firmware routes). */
export function switchRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/nvos-install',
      tag: 'switch',
      summary:
        'Install an NVOS image (a catalog package uploaded with format=nvos) on a switch tray (intent): done at once when the switch runs its build, upload skipped when the switch holds the file, then install, reboot and build check. 409 when the device has no NVOS endpoint, the package is no NVOS image, or the device is busy. Idempotency-Key honoured',
      role: 'operator',
      params: z.object({ id: uuid }).strict(),
      body: z.object({ package_id: uuid }).strict(),
      success: [202, 'The job (Location: /v1/jobs/{id})'],
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const device = await getDevice(db, params.id);
      if (!device) throw notFound('device', params.id);
      if (device.deletedAt) throw new ApiError('FAILED_PRECONDITION', `device ${device.name} was deleted from the inventory`);
      const missing = missingForNvos(device);
      if (missing.length) throw new ApiError('FAILED_PRECONDITION', `device ${device.name} cannot run an NVOS install: the inventory gives no ${missing.join(', ')}`);
      const pkg = await getFirmwarePackage(db, body.package_id);
      if (!pkg) throw invalid('body.package_id', `package ${body.package_id} does not exist`);
      if (!isNvosImage(pkg.metadata)) throw new ApiError('FAILED_PRECONDITION', `package ${pkg.fileName} is a ${pkg.format} package, not an NVOS image (upload images with format=nvos)`);
      const { job } = await createJob(db, request, {
        job: { kind: 'switch.nvos_install', deviceId: device.id, siteId: device.siteId, params: { package_id: pkg.id, build_id: pkg.metadata.buildId } },
        action: 'switch.nvos_install',
        target: `device/${device.id}`,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );
}
