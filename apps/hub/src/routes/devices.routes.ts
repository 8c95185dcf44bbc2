import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getDevice, getSite, insertDevice, listDevices, type Db } from '@fleet/db';
import { NodeType, PowerAction } from '@fleet/domain';
import { ApiError, invalid } from '../errors.js';
import { auditAccepted } from '../plugins/audit.js';
import { decodeCursor, encodeCursor, limitSchema, repeated } from '../pagination.js';
import { createJob } from '../services/jobs.service.js';
import { parse } from '../validation.js';
import { deviceView, jobView, type ViewContext } from '../views.js';

const uuid = z.string().uuid('must be a UUID');

const NewDevice = z
  .object({
    name: z.string().min(1).max(200),
    site_id: z.string().min(1),
    node_type: NodeType,
    bmc_url: z.string().url().refine((u) => /^https?:\/\//.test(u), 'must be an http(s) URL'),
    credential_ref: z.string().min(1).max(200).regex(/^[A-Za-z0-9_./-]+$/, 'must be a reference name, not a secret'),
  })
  .strict();

const PowerBody = z.object({ action: PowerAction }).strict();

const DeviceQuery = z
  .object({ limit: limitSchema, cursor: z.string().optional(), site_id: repeated(z.string().min(1)) })
  .strict();

export function deviceRoutes(app: FastifyInstance, db: Db, views: ViewContext): void {
  app.get('/v1/devices', { config: { role: 'viewer' } }, async (request) => {
    const q = parse(DeviceQuery, request.query, 'query');
    const after = decodeCursor(q.cursor, z.tuple([z.string(), uuid]));
    const rows = await listDevices(db, { limit: q.limit + 1, ...(after ? { after: { name: after[0], id: after[1] } } : {}), ...(q.site_id ? { siteId: q.site_id } : {}) });
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    return { items: page.map(deviceView), next_cursor: rows.length > q.limit && last ? encodeCursor([last.name, last.id]) : null };
  });

  app.get('/v1/devices/:id', { config: { role: 'viewer' } }, async (request) => {
    const id = parse(uuid, (request.params as { id: string }).id, 'path.id');
    const device = await getDevice(db, id);
    if (!device) throw new ApiError('NOT_FOUND', `device ${id} does not exist`);
    return deviceView(device);
  });

  app.post('/v1/devices', { config: { role: 'admin' } }, async (request, reply) => {
    const body = parse(NewDevice, request.body, 'body');
    if (!(await getSite(db, body.site_id))) throw invalid('body.site_id', `site ${body.site_id} does not exist`);
    const device = await db
      .transaction(async (tx) => {
        const row = await insertDevice(tx, {
          name: body.name,
          siteId: body.site_id,
          nodeType: body.node_type,
          bmcUrl: body.bmc_url,
          credentialRef: body.credential_ref,
        });
        await auditAccepted(tx, request, 201, { action: 'device.create', target: `device/${row.id}`, details: { name: row.name } });
        return row;
      })
      .catch((err: { cause?: { code?: string } }) => {
        if (err.cause?.code === '23505') throw new ApiError('ALREADY_EXISTS', `a device named ${body.name} already exists`, [{ field: 'body.name', issue: 'taken' }]);
        throw err;
      });
    return reply.status(201).header('location', `/v1/devices/${device.id}`).send(deviceView(device));
  });

  app.post('/v1/devices/:id/power', { config: { role: 'operator' } }, async (request, reply) => {
    const id = parse(uuid, (request.params as { id: string }).id, 'path.id');
    const body = parse(PowerBody, request.body, 'body');
    const device = await getDevice(db, id);
    if (!device) throw new ApiError('NOT_FOUND', `device ${id} does not exist`);
    const { job } = await createJob(db, request, {
      job: { kind: 'device.power', deviceId: device.id, siteId: device.siteId, params: { action: body.action } },
      action: 'device.power',
      target: `device/${device.id}`,
    });
    return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
  });
}
