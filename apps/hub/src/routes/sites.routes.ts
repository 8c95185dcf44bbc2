import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  getSite,
  getSyncState,
  listRacks,
  listSites,
  rackDeviceSummaries,
  siteSatellitesOf,
  type Db,
  type SiteSummary,
} from '@fleet/db';
import { siteAllowed } from '@fleet/domain';
import { ApiError } from '../errors.js';
import { callerOf } from '../services/caller.js';
import { createSite, removeSite, siteWithSatellite } from '../services/sites.service.js';
import { siteSummary } from '../services/site-summary.service.js';
import { repeated } from '../pagination.js';
import { SiteIdParam } from '../params.js';
import { scopedSiteFilter } from '../services/site-scope.js';
import { defineRoute, sendCreated, type ApiDoc } from '../route.js';
import { newSiteId, siteId } from '../validation.js';
import { RackPage, rackView, SitePage, SiteView, siteView, syncView, timestamp } from '../views.js';

const NewSite = z
  .object({
    id: newSiteId,
    name: z.string().min(1).max(200),
  })
  .strict();

/** A registration's answer: the site (its task queue named) and its satellite's credential, shown once. */
const CreatedSite = SiteView.extend({
  satellite_token: z
    .object({
      id: z.string(),
      name: z.string(),
      role: z.literal('satellite'),
      token: z
        .string()
        .nullable()
        .describe(
          "The satellite's hub token (its config's hub.tokenRef): shown in this answer only; null in the replay " +
            'of an Idempotency-Key',
        ),
    })
    .describe('A token of role satellite limited to this site, revoked when the site is removed'),
}).meta({ id: 'CreatedSite' });

const counts = z.record(z.string(), z.number().int());

/** What the fleet overview shows of a site, counted by the database rather than from every device's row. */
export const SiteSummaryView = z
  .object({
    site_id: z.string(),
    devices: z.number().int().describe('Devices of the site; those deleted from NetBox are left out'),
    by_role: counts.describe("Devices by NetBox role slug; devices without a role count under the key ''"),
    by_power_state: counts.describe('Devices by last observed power state'),
    by_lifecycle_state: counts.describe('Devices by NetBox status'),
    racks: z.number().int(),
    open_issues: z.number().int().describe('Open inventory issues on the site, its racks and its devices'),
    running_jobs: z
      .number()
      .int()
      .describe('Top-level jobs and campaigns of the site not finished yet (queued, running or cancelling)'),
    as_of: timestamp.describe('When the counts were taken: all of them are from that one moment'),
  })
  .meta({ id: 'SiteSummary' });

function siteSummaryView(s: SiteSummary): z.infer<typeof SiteSummaryView> {
  return {
    site_id: s.siteId,
    devices: s.devices,
    by_role: s.byRole,
    by_power_state: s.byPowerState,
    by_lifecycle_state: s.byLifecycleState,
    racks: s.racks,
    open_issues: s.openIssues,
    running_jobs: s.runningJobs,
    as_of: s.asOf.toISOString(),
  };
}

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
      sites: 'scoped',
      success: { status: 200, description: 'Sites', body: SitePage },
    },
    async ({ request }) => {
      const sync = await getSyncState(db, 'netbox');
      const sites = (await listSites(db)).filter((s) => siteAllowed(request.actor!.sites, s.id));
      // One statement for every listed site's satellite, not one per site.
      const satellites = await siteSatellitesOf(
        db,
        sites.map((s) => s.id),
      );
      return {
        items: sites.map((s) => siteView(s, satellites.get(s.id), sync)),
        next_cursor: null,
        sync: syncView(sync),
      };
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
      sites: 'scoped',
      params: SiteIdParam,
      success: { status: 200, description: 'The site', body: SiteView },
      errors: [404],
    },
    async ({ params }) => {
      const site = await getSite(db, params.id);
      if (!site) throw new ApiError('NOT_FOUND', `site ${params.id} does not exist`);
      const [satellites, sync] = await Promise.all([siteSatellitesOf(db, [site.id]), getSyncState(db, 'netbox')]);
      return siteView(site, satellites.get(site.id), sync);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/sites/:id/summary',
      tag: 'inventory',
      summary:
        "A site's device counts by role, power state and lifecycle, with its racks, open inventory issues and " +
        'unfinished jobs, all taken at one moment',
      role: 'viewer',
      sites: 'scoped',
      params: SiteIdParam,
      success: { status: 200, description: 'The counts', body: SiteSummaryView },
      errors: [404],
    },
    async ({ params }) => siteSummaryView(await siteSummary(db, params.id)),
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/sites',
      tag: 'inventory',
      summary:
        'Register a site by hand (NetBox-synced sites appear on their own): the answer names its task queue and ' +
        'carries its satellite\'s token, shown once (docs/deployment.md, "Sites"). Idempotency-Key honoured',
      role: 'admin',
      body: NewSite,
      success: {
        status: 201,
        description: 'The site and its satellite token',
        body: CreatedSite,
        headers: ['Location'],
      },
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
      method: 'DELETE',
      url: '/v1/sites/:id',
      tag: 'inventory',
      summary:
        'Remove a site: it drains (new jobs on its devices and racks are a 409) and is removed, its satellite tokens ' +
        'revoked, once its running jobs have finished; its jobs and audit stay. Asking again answers the same',
      role: 'admin',
      params: SiteIdParam,
      success: { status: 202, description: 'The site, draining', body: SiteView },
      errors: [404],
    },
    async ({ request, reply, params }) => {
      const site = await removeSite(db, callerOf(request), params.id);
      return reply.status(202).send(await siteWithSatellite(db, site));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/racks',
      tag: 'inventory',
      summary:
        'List racks, each with its device count and its devices by Fleet lifecycle state and by conditions not True',
      role: 'viewer',
      sites: 'scoped',
      query: z.object({ site_id: repeated(siteId) }).strict(),
      success: { status: 200, description: 'Racks', body: RackPage },
      errors: [400],
    },
    async ({ request, query }) => {
      const siteIds = scopedSiteFilter(request.actor!, query.site_id, 'query.site_id');
      const [sync, racks] = await Promise.all([getSyncState(db, 'netbox'), listRacks(db, siteIds)]);
      const rackIds = racks.map((r) => r.id);
      // One grouped statement for the whole list, not one per rack.
      const summaries = await rackDeviceSummaries(db, rackIds);
      return { items: racks.map((r) => rackView(r, summaries.get(r.id)!, sync)), next_cursor: null };
    },
  );
}
