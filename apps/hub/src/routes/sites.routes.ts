import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getSite, insertSite, listSites, type Db } from '@fleet/db';
import { ApiError } from '../errors.js';
import { auditAccepted } from '../plugins/audit.js';
import { parse } from '../validation.js';
import { siteView } from '../views.js';

const NewSite = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be a lower-case slug (a-z, 0-9, -)'),
    name: z.string().min(1).max(200),
  })
  .strict();

export function siteRoutes(app: FastifyInstance, db: Db): void {
  app.get('/v1/sites', { config: { role: 'viewer' } }, async () => ({ items: (await listSites(db)).map(siteView), next_cursor: null }));

  app.get('/v1/sites/:id', { config: { role: 'viewer' } }, async (request) => {
    const { id } = request.params as { id: string };
    const site = await getSite(db, id);
    if (!site) throw new ApiError('NOT_FOUND', `site ${id} does not exist`);
    return siteView(site);
  });

  app.post('/v1/sites', { config: { role: 'admin' } }, async (request, reply) => {
    const body = parse(NewSite, request.body, 'body');
    if (await getSite(db, body.id)) throw new ApiError('ALREADY_EXISTS', `site ${body.id} already exists`, [{ field: 'body.id', issue: 'taken' }]);
    const site = await db.transaction(async (tx) => {
      const row = await insertSite(tx, body);
      await auditAccepted(tx, request, 201, { action: 'site.create', target: `site/${row.id}` });
      return row;
    });
    return reply.status(201).header('location', `/v1/sites/${site.id}`).send(siteView(site));
  });
}
