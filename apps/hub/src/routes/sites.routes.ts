import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getSite, getSyncState, insertSite, listRacks, listSites, type Db } from '@fleet/db';
import { ApiError } from '../errors.js';
import { auditAccepted } from '../plugins/audit.js';
import { repeated } from '../pagination.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { newSiteId, siteId } from '../validation.js';
import { rackView, siteView, syncView } from '../views.js';
import { idempotentCreate } from '../services/idempotent-create.js';

const NewSite = z
  .object({
    id: newSiteId,
    name: z.string().min(1).max(200),
  })
  .strict();
const IdParam = z.object({ id: siteId }).strict();

export function siteRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/sites',
      tag: 'inventory',
      summary: 'List sites, with the freshness of the NetBox mirror',
      role: 'viewer',
      success: [200, 'Sites'],
    },
    async () => {
      const sync = await getSyncState(db, 'netbox');
      return { items: (await listSites(db)).map((s) => siteView(s, sync)), next_cursor: null, sync: syncView(sync) };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/sites/:id',
      tag: 'inventory',
      summary: 'One site',
      role: 'viewer',
      params: IdParam,
      success: [200, 'The site'],
      errors: [404],
    },
    async ({ params }) => {
      const site = await getSite(db, params.id);
      if (!site) throw new ApiError('NOT_FOUND', `site ${params.id} does not exist`);
      return siteView(site, await getSyncState(db, 'netbox'));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/sites',
      tag: 'inventory',
      summary: 'Register a site by hand (NetBox-synced sites appear on their own). Idempotency-Key honoured',
      role: 'admin',
      body: NewSite,
      success: [201, 'The site'],
      errors: [400, 409],
    },
    ({ request, reply, body }) =>
      idempotentCreate(db, request, reply, async (tx) => {
        if (await getSite(tx, body.id))
          throw new ApiError('ALREADY_EXISTS', `site ${body.id} already exists`, [
            { field: 'body.id', issue: 'taken' },
          ]);
        const row = await insertSite(tx, body);
        await auditAccepted(tx, request, 201, { action: 'site.create', target: `site/${row.id}` });
        return { status: 201, headers: { location: `/v1/sites/${row.id}` }, body: siteView(row) };
      }),
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/racks',
      tag: 'inventory',
      summary: 'List racks',
      role: 'viewer',
      query: z.object({ site_id: repeated(siteId) }).strict(),
      success: [200, 'Racks'],
      errors: [400],
    },
    async ({ query }) => {
      const sync = await getSyncState(db, 'netbox');
      return { items: (await listRacks(db, query.site_id)).map((r) => rackView(r, sync)), next_cursor: null };
    },
  );
}
