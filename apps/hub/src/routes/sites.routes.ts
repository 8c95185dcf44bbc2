import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getSite, getSyncState, listRacks, listSites, type Db } from '@fleet/db';
import { ApiError } from '../errors.js';
import { callerOf } from '../services/caller.js';
import { createSite } from '../services/inventory.service.js';
import { repeated } from '../pagination.js';
import { SiteIdParam } from '../params.js';
import { defineRoute, sendCreated, type ApiDoc } from '../route.js';
import { newSiteId, siteId } from '../validation.js';
import { RackPage, rackView, SitePage, SiteView, siteView, syncView } from '../views.js';

const NewSite = z
  .object({
    id: newSiteId,
    name: z.string().min(1).max(200),
  })
  .strict();

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
      success: { status: 200, description: 'Sites', body: SitePage },
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
      params: SiteIdParam,
      success: { status: 200, description: 'The site', body: SiteView },
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
      success: { status: 201, description: 'The site', body: SiteView, headers: ['Location'] },
      errors: [400, 409],
    },
    async ({ request, reply, body }) => {
      const created = await createSite(db, callerOf(request), body);
      return sendCreated(reply, created);
    },
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
      success: { status: 200, description: 'Racks', body: RackPage },
      errors: [400],
    },
    async ({ query }) => {
      const sync = await getSyncState(db, 'netbox');
      return { items: (await listRacks(db, query.site_id)).map((r) => rackView(r, sync)), next_cursor: null };
    },
  );
}
