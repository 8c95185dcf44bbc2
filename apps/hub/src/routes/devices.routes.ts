import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listDevicesJson, readDeviceDetail, type Db } from '@fleet/db';
import {
  fleetLifecycleStates,
  isNvueBaseUrl,
  lifecycleStates,
  NodeType,
  parseHostPort,
  PowerAction,
  PowerState,
  roleOfNodeType,
  sshHostKeyFingerprint,
  jobKindTable,
} from '@fleet/domain';
import { ApiError, invalid } from '../errors.js';
import { OverrideQuarantine } from '../hold-override.js';
import { callerOf } from '../services/caller.js';
import { createDevice, operableDevice } from '../services/inventory.service.js';
import { decodeCursor, encodeCursor, jsonPageBody, limitSchema, repeated } from '../pagination.js';
import { IdParam, uuid } from '../params.js';
import { scopedSiteFilter } from '../services/site-scope.js';
import { defineRoute, sendCreated, type ApiDoc } from '../route.js';
import { siteId } from '../validation.js';
import { createJob } from '../services/jobs.service.js';
import {
  DeviceDetailView,
  deviceDetailView,
  DevicePage,
  DeviceView,
  jobAccepted,
  jobView,
  type ViewContext,
} from '../views.js';
import { checkRoleFilter, conditionFilter, roleFilter } from '../inventory-filters.js';

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must be an http(s) URL');
const credentialRef = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_./-]+$/, 'must be a reference name, not a secret');

const NewDevice = z
  .object({
    name: z.string().min(1).max(200),
    site_id: siteId,
    node_type: NodeType,
    bmc_url: httpUrl,
    credential_ref: credentialRef,
    /**
     * Switch trays: NVOS's NVUE REST base URL, SSH endpoint, login reference (default credential_ref) and pinned host
     * key.
     */
    nvos_url: z
      .string()
      .refine(isNvueBaseUrl, 'must be an http(s) URL without credentials, query or fragment')
      .optional(),
    nvos_ssh: z
      .string()
      .refine((v) => parseHostPort(v) !== undefined, 'must be host:port')
      .optional(),
    nvos_credential_ref: credentialRef.optional(),
    nvos_host_key: z
      .string()
      .regex(sshHostKeyFingerprint, 'must be an SSH host key fingerprint, SHA256:<base64>')
      .optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (roleOfNodeType(d.node_type) === 'switch') return;
    for (const field of ['nvos_url', 'nvos_ssh', 'nvos_credential_ref', 'nvos_host_key'] as const) {
      if (d[field] !== undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: 'only switch trays run NVOS' });
    }
  });

const PowerBody = z.object({ action: PowerAction, override_quarantine: OverrideQuarantine.optional() }).strict();

const sorts = ['name', '-name', 'created_at', '-created_at'] as const;

const DeviceQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    sort: z.enum(sorts).default('name'),
    site_id: repeated(siteId),
    rack_id: repeated(uuid),
    role: roleFilter,
    vendor: repeated(z.string().min(1)),
    model: repeated(z.string().min(1)),
    node_type: repeated(NodeType),
    lifecycle_state: repeated(z.enum(lifecycleStates)).describe("NetBox's device status; repeat for OR"),
    lifecycle: repeated(z.enum(fleetLifecycleStates)).describe("Fleet's own lifecycle state; repeat for OR"),
    condition: conditionFilter,
    power_state: repeated(PowerState),
    firmware_version: repeated(z.string().min(1)),
  })
  .strict();

export function deviceRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/devices',
      tag: 'inventory',
      summary: 'List devices: filters (repeat a parameter for OR), keyset pagination, sort on indexed fields',
      role: 'viewer',
      sites: 'scoped',
      query: DeviceQuery,
      success: { status: 200, description: 'Devices', body: DevicePage },
      errors: [400],
    },
    async ({ request, query: q, reply }) => {
      const siteIds = scopedSiteFilter(request.actor!, q.site_id, 'query.site_id');
      const byName = q.sort.endsWith('name');
      const after = decodeCursor(q.cursor, z.tuple([z.string(), uuid, z.enum(sorts)]));
      if (after && after[2] !== q.sort)
        throw invalid('query.cursor', `the cursor belongs to sort=${after[2]}; keep the sort of the first page`);
      // Postgres writes each device's JSON (deviceView's, provenance included) in the page's own statement: the hub
      // passes those texts through rather than mapping, viewing and stringifying 100 rows a request.
      const page = await listDevicesJson(
        db,
        {
          limit: q.limit,
          sort: byName ? 'name' : 'created_at',
          descending: q.sort.startsWith('-'),
          filters: {
            siteId: siteIds,
            rackId: q.rack_id,
            role: q.role,
            vendor: q.vendor,
            model: q.model,
            nodeType: q.node_type,
            lifecycleState: q.lifecycle_state,
            fleetLifecycle: q.lifecycle,
            powerState: q.power_state,
            firmwareVersion: q.firmware_version,
          },
          conditions: q.condition,
          ...(after ? { after: { value: byName ? after[0] : new Date(after[0]), id: after[1] } } : {}),
        },
        'netbox',
      );
      // A role a listed (current) device holds is known: only the others are looked up.
      await checkRoleFilter(db, q.role, 'query.role', page.roles);
      const { last } = page;
      const nextCursor = last ? encodeCursor([byName ? last.name : last.createdAt, last.id, q.sort]) : null;
      // The DevicePage JSON, as returning {items, next_cursor} would send it.
      const body = jsonPageBody(page.items, nextCursor);
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/devices/:id',
      tag: 'inventory',
      summary:
        "A device with Fleet's lifecycle and its conditions, interfaces, addresses, sync provenance, inventory " +
        "issues and the firmware versions its jobs verified (a switch tray's NVOS build is also its firmware_version)",
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      success: { status: 200, description: 'The device', body: DeviceDetailView },
      errors: [400, 404],
    },
    async ({ params }) => {
      const d = await readDeviceDetail(db, params.id);
      if (!d) throw new ApiError('NOT_FOUND', `device ${params.id} does not exist`);
      return deviceDetailView(d.device, d.status, d.network, d.issues, d.sync, d.firmware);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices',
      tag: 'inventory',
      summary: 'Register a device by hand (NetBox-synced devices appear on their own). Idempotency-Key honoured',
      role: 'admin',
      sites: 'scoped',
      body: NewDevice,
      success: { status: 201, description: 'The device', body: DeviceView, headers: ['Location'] },
      errors: [400, 409],
    },
    async ({ request, reply, body }) => {
      const created = await createDevice(db, callerOf(request), {
        name: body.name,
        siteId: body.site_id,
        nodeType: body.node_type,
        bmcUrl: body.bmc_url,
        credentialRef: body.credential_ref,
        nvosUrl: body.nvos_url ?? null,
        nvosSsh: body.nvos_ssh ?? null,
        nvosCredentialRef: body.nvos_credential_ref ?? null,
        nvosHostKey: body.nvos_host_key ?? null,
      });
      return sendCreated(reply, created);
    },
  );

  const operable = (id: string) => operableDevice(db, id);

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/bmc-reset',
      tag: 'power',
      summary:
        'Reboot the device BMC (or a compute tray HMC) with Manager.Reset and wait until it answers again (intent). ' +
        '409 on a held device (quarantined, remediating, rma) unless override_quarantine gives a reason',
      role: jobKindTable['device.bmc_reset'].role,
      sites: 'scoped',
      params: IdParam,
      body: z
        .object({ manager: z.enum(['bmc', 'hmc']).default('bmc'), override_quarantine: OverrideQuarantine.optional() })
        .strict(),
      success: jobAccepted('The job'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const device = await operable(params.id);
      if (body.manager === 'hmc' && roleOfNodeType(device.nodeType!) !== 'compute')
        throw invalid('body.manager', `${device.nodeType} has no HMC`);
      const { job } = await createJob(db, callerOf(request), {
        job: {
          kind: 'device.bmc_reset',
          deviceId: device.id,
          siteId: device.siteId,
          params: { manager: body.manager },
        },
        action: 'device.bmc_reset',
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
      url: '/v1/devices/:id/power-refresh',
      tag: 'power',
      summary: 'Read the device power state from its BMC now (intent)',
      role: jobKindTable['device.power_refresh'].role,
      sites: 'scoped',
      params: IdParam,
      success: jobAccepted('The job'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params }) => {
      const device = await operable(params.id);
      const { job } = await createJob(db, callerOf(request), {
        job: { kind: 'device.power_refresh', deviceId: device.id, siteId: device.siteId, params: {} },
        action: 'device.power_refresh',
        target: `device/${device.id}`,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/power',
      tag: 'power',
      summary:
        'Power action on one device (intent): 202 with the job; Idempotency-Key honoured. 409 on a held device ' +
        '(quarantined, remediating, rma) unless override_quarantine gives a reason',
      role: jobKindTable['device.power'].role,
      sites: 'scoped',
      params: IdParam,
      body: PowerBody,
      success: jobAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const device = await operable(params.id);
      const { job } = await createJob(db, callerOf(request), {
        job: { kind: 'device.power', deviceId: device.id, siteId: device.siteId, params: { action: body.action } },
        action: 'device.power',
        target: `device/${device.id}`,
        overrideQuarantine: body.override_quarantine,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );
}
