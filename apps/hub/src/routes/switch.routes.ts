import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { getFirmwarePackage, getFirmwareManifest, type Db, type Device } from '@fleet/db';
import { isNvosImage, switchFirmwareComponents, type JobKind, jobKindTable } from '@fleet/domain';
import { jobOrApprovalAccepted, sendOutcome } from '../approvals/views.js';
import type { TwoPersonConfig } from '../config.js';
import { ApiError, invalid } from '../errors.js';
import { OverrideQuarantine } from '../hold-override.js';
import { callerOf } from '../services/caller.js';
import { IdParam, uuid } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { requestGate } from '../services/approvals.service.js';
import { createJob } from '../services/jobs.service.js';
import { factoryResetSwitch, nvosDevice } from '../services/switch.service.js';
import { assertOwnNvosCredential } from '../services/switch-credentials.service.js';
import { jobAccepted, jobView, type ViewContext } from '../views.js';

/**
 * Switch trays' NVOS: image installs, platform firmware, password rotation, factory reset, certificates (the Redfish
 * side of a switch is in the power and firmware routes). Each refuses a held switch (quarantined, remediating, rma)
 * with 409 unless the body's override_quarantine gives a reason.
 */
export function switchRoutes(
  app: FastifyInstance,
  doc: ApiDoc,
  db: Db,
  views: ViewContext,
  twoPerson: TwoPersonConfig,
): void {
  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/nvos-install',
      tag: 'switch',
      summary:
        'Install an NVOS image (a catalog package uploaded with format=nvos) on a switch tray (intent): ' +
        'done at once when the switch runs its build, upload skipped when the switch holds the file, then ' +
        'install, reboot and build check. 409 when the device has no NVOS endpoint, the package is no NVOS ' +
        'image, or the device is busy. Idempotency-Key honoured',
      role: jobKindTable['switch.nvos_install'].role,
      sites: 'scoped',
      params: IdParam,
      body: z.object({ package_id: uuid, override_quarantine: OverrideQuarantine.optional() }).strict(),
      success: jobAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const device = await nvosDevice(db, params.id, 'run an NVOS install');
      const pkg = await getFirmwarePackage(db, body.package_id);
      if (!pkg) throw invalid('body.package_id', `package ${body.package_id} does not exist`);
      if (!isNvosImage(pkg.metadata))
        throw new ApiError(
          'FAILED_PRECONDITION',
          `package ${pkg.fileName} is a ${pkg.format} package, not an NVOS image (upload images with format=nvos)`,
        );
      return accepted(
        request,
        reply,
        device,
        'switch.nvos_install',
        { package_id: pkg.id, build_id: pkg.metadata.buildId },
        body.override_quarantine,
      );
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/switch-firmware-update',
      tag: 'switch',
      summary:
        "Update a switch tray's platform firmware over NVUE (intent): the manifest's steps name components " +
        '(bmc, erot, fpga, cpld1, bios) and run in that order; components already at the target are ' +
        'skipped unless forced. 409 when the device has no NVOS endpoint or is busy',
      role: jobKindTable['switch.firmware_update'].role,
      sites: 'scoped',
      params: IdParam,
      body: z
        .object({
          manifest_id: uuid,
          force: z.boolean().default(false),
          override_quarantine: OverrideQuarantine.optional(),
        })
        .strict(),
      success: jobAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const device = await nvosDevice(db, params.id, 'update its switch firmware');
      const manifest = await getFirmwareManifest(db, body.manifest_id);
      if (!manifest) throw invalid('body.manifest_id', `manifest ${body.manifest_id} does not exist`);
      const bad = manifest.steps.filter((s) => !(switchFirmwareComponents as readonly string[]).includes(s.name));
      if (bad.length)
        throw invalid(
          'body.manifest_id',
          `steps must be named after switch components (${switchFirmwareComponents.join(', ')}); not ` +
            `${bad.map((s) => s.name).join(', ')}`,
        );
      return accepted(
        request,
        reply,
        device,
        'switch.firmware_update',
        { manifest_id: manifest.id, force: body.force },
        body.override_quarantine,
      );
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/nvos-password-rotation',
      tag: 'switch',
      summary:
        "Rotate the switch's NVOS password (intent): the satellite generates it, applies it through an " +
        "NVUE revision, checks it and stores it in its own secret store under the switch's NVOS credential " +
        'reference; it never reaches the hub, Postgres, Temporal or logs. 409 when that reference is not ' +
        "the switch's own (absent, so the BMC's is used, or also a BMC's or another switch's reference)",
      role: jobKindTable['switch.password_rotation'].role,
      sites: 'scoped',
      params: IdParam,
      // Optional: only a held switch needs a body, to override its hold.
      body: z.object({ override_quarantine: OverrideQuarantine.optional() }).strict().optional(),
      success: jobAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const device = await nvosDevice(db, params.id, 'rotate its NVOS password');
      await assertOwnNvosCredential(db, device);
      return accepted(request, reply, device, 'switch.password_rotation', {}, body?.override_quarantine);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/nvos-factory-reset',
      tag: 'switch',
      summary:
        'Reset NVOS to factory defaults (destructive intent, admin): the body must repeat the device name ' +
        'in `confirm`. The switch comes back with admin/admin. Two-person rule switch.factory_reset',
      role: jobKindTable['switch.factory_reset'].role,
      sites: 'scoped',
      params: IdParam,
      body: z.object({ confirm: z.string(), override_quarantine: OverrideQuarantine.optional() }).strict(),
      success: jobOrApprovalAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const out = await factoryResetSwitch(db, callerOf(request), requestGate(twoPerson), {
        device_id: params.id,
        confirm: body.confirm,
        override_quarantine: body.override_quarantine,
      });
      return sendOutcome(reply, out, views);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/nvos-certificate',
      tag: 'switch',
      summary:
        "Install the site's switch mTLS material for `domain` and bind the NVUE API to it (intent, admin); " +
        'the material stays on the satellite',
      role: jobKindTable['switch.certificate_install'].role,
      sites: 'scoped',
      params: IdParam,
      body: z
        .object({
          domain: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'must be a certificate domain name'),
          override_quarantine: OverrideQuarantine.optional(),
        })
        .strict(),
      success: jobAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) =>
      accepted(
        request,
        reply,
        await nvosDevice(db, params.id, 'take a certificate'),
        'switch.certificate_install',
        { domain: body.domain },
        body.override_quarantine,
      ),
  );

  async function accepted(
    request: FastifyRequest,
    reply: FastifyReply,
    device: Device,
    kind: JobKind,
    params: Record<string, unknown>,
    overrideQuarantine: OverrideQuarantine | undefined,
  ) {
    const { job } = await createJob(db, callerOf(request), {
      job: { kind, deviceId: device.id, siteId: device.siteId, params },
      action: kind,
      target: `device/${device.id}`,
      overrideQuarantine,
    });
    return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
  }
}
