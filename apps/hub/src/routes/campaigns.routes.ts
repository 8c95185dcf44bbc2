import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  childCounts,
  getSite,
  listCampaignDevices,
  listCampaigns,
  readCampaignDetail,
  siteMaintenanceWindows,
  type Db,
} from '@fleet/db';
import { CampaignPolicy, JobState, NodeType, type CampaignSignal, jobKindTable } from '@fleet/domain';
import { createCampaign } from '../campaigns/create.js';
import { MAX_CAMPAIGN_DEVICES, planCampaign } from '../campaigns/planner.js';
import {
  CampaignDevicePage,
  campaignDeviceView,
  CampaignPage,
  CampaignView,
  campaignView,
  DryRunView,
  planView,
  WindowsView,
  windowsView,
} from '../campaigns/views.js';
import type { HubConfig } from '../config.js';
import { ApiError, invalid, notFound } from '../errors.js';
import { OverrideQuarantine } from '../hold-override.js';
import { callerOf } from '../services/caller.js';
import { campaignJob, cancelCampaign, setMaintenanceWindows, signalCampaign } from '../services/campaigns.service.js';
import { decodeCursor, cursorPage, limitSchema, repeated } from '../pagination.js';
import { IdParam, SiteIdParam, uuid } from '../params.js';
import { checkSites, scopedSiteFilter } from '../services/site-scope.js';
import { bulkBodyLimit, defineRoute, type ApiDoc } from '../route.js';
import { siteId } from '../validation.js';
import { jobAccepted, jobView, type ViewContext } from '../views.js';

const CampaignBody = z
  .object({
    name: z.string().min(1).max(200),
    site_id: siteId,
    /** Selection within the site: each list is an OR of its values; lists AND together; none = the whole site. */
    rack_ids: z.array(uuid).min(1).max(1000).optional(),
    device_ids: z.array(uuid).min(1).max(MAX_CAMPAIGN_DEVICES).optional(),
    node_types: z.array(NodeType).min(1).optional(),
    /** Node type → manifest id; other types get their default manifest. */
    manifests: z.partialRecord(NodeType, uuid).optional(),
    policy: CampaignPolicy.default(CampaignPolicy.parse({})),
    /** Answer the plan and write nothing. */
    dry_run: z.boolean().default(false),
    /** Plan held devices (quarantined, remediating, rma) too, instead of leaving them out. */
    override_quarantine: OverrideQuarantine.optional(),
  })
  .strict();

const CampaignQuery = z
  .object({ limit: limitSchema, cursor: z.string().optional(), site_id: repeated(siteId), state: repeated(JobState) })
  .strict();
const DeviceQuery = z.object({ limit: limitSchema, cursor: z.string().optional(), state: repeated(JobState) }).strict();

const Window = z
  .object({
    /** 0 = Sunday … 6 = Saturday. */
    weekdays: z
      .array(z.number().int().min(0).max(6))
      .min(1)
      .max(7)
      .refine((d) => new Set(d).size === d.length, 'a weekday is repeated'),
    start: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM in UTC, 00:00 to 23:59'),
    duration_minutes: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60),
  })
  .strict();
const WindowsBody = z.object({ windows: z.array(Window).max(100) }).strict();

const signals: Record<CampaignSignal, string> = {
  pause: 'Pause the campaign: device updates already running finish, no new one starts',
  resume: 'Resume a paused campaign; its failure budget counts again from zero',
  approve:
    "Approve the rollout after the canary wave; under the two-person rule campaign.approve, not by the campaign's " +
    'creator (403 naming the rule)',
};

/** Device failures shown in a campaign's detail; the devices endpoint pages through all of them. */
const FAILURES_SHOWN = 20;

export function campaignRoutes(
  app: FastifyInstance,
  doc: ApiDoc,
  db: Db,
  views: ViewContext,
  settings: HubConfig['campaigns'],
  twoPerson: HubConfig['twoPerson'],
): void {
  const detail = async (id: string) => {
    const d = await readCampaignDetail(db, id, FAILURES_SHOWN);
    if (!d) throw notFound('firmware campaign', id);
    return campaignView(d.summary, views, d.counts, { excluded: d.summary.excluded, failures: d.failures });
  };

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/firmware-campaigns',
      bodyLimit: bulkBodyLimit,
      tag: 'firmware',
      summary:
        'Plan and start a firmware campaign over a site (intent): a canary, then waves under the policy ' +
        'caps. dry_run answers 200 {plan} and writes nothing. Devices already compliant, not operable or held ' +
        '(quarantined, remediating, rma; unless override_quarantine gives a reason) are left out with the ' +
        'reason; any busy device refuses the campaign (409). Idempotency-Key honoured',
      role: jobKindTable['firmware.campaign'].role,
      sites: 'scoped',
      body: CampaignBody,
      success: {
        status: 202,
        description: 'The campaign (Location: /v1/jobs/{id}, its job)',
        body: CampaignView,
        headers: ['Location'],
      },
      alsoSucceeds: [
        { status: 200, description: '{plan} of a dry run (dry_run: true); nothing is written', body: DryRunView },
      ],
      errors: [400, 409],
    },
    async ({ request, reply, body }) => {
      // Before the plan: a dry run reads the site's devices too.
      checkSites(request.actor!, [body.site_id], `site/${body.site_id}`, 'body.site_id');
      if (!(await getSite(db, body.site_id))) throw invalid('body.site_id', `site ${body.site_id} does not exist`);
      const plan = () =>
        planCampaign(
          db,
          {
            siteId: body.site_id,
            rackIds: body.rack_ids,
            deviceIds: body.device_ids,
            nodeTypes: body.node_types,
            manifests: body.manifests,
            policy: body.policy,
            overrideHolds: body.override_quarantine !== undefined,
          },
          settings.deviceDurationS,
        );
      if (body.dry_run) return { plan: planView(await plan()) };
      const { dry_run: _dryRun, ...params } = body;
      const job = await createCampaign(db, callerOf(request), async () => {
        const p = await plan();
        if (!p.devices.length)
          throw new ApiError(
            'FAILED_PRECONDITION',
            `no device of the selection needs an update (${p.excluded.length} left out); a dry run lists the reasons`,
          );
        return {
          name: body.name,
          siteId: body.site_id,
          policy: body.policy,
          params,
          plan: p,
          overrideQuarantine: body.override_quarantine,
        };
      });
      return reply
        .status(202)
        .header('location', `/v1/jobs/${job.id}`)
        .send(await detail(job.id));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware-campaigns',
      tag: 'firmware',
      summary: 'List firmware campaigns, newest first, with plan summary, job state and device counts by state',
      role: 'viewer',
      sites: 'scoped',
      query: CampaignQuery,
      success: { status: 200, description: 'Campaigns', body: CampaignPage },
      errors: [400],
    },
    async ({ request, query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.string().datetime(), uuid]));
      const rows = await listCampaigns(db, {
        limit: q.limit + 1,
        after: after && { createdAt: new Date(after[0]), id: after[1] },
        siteId: scopedSiteFilter(request.actor!, q.site_id, 'query.site_id'),
        state: q.state,
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.createdAt.toISOString(), last.id]);
      const counts = await childCounts(
        db,
        page.map((c) => c.id),
      );
      return {
        items: page.map((c) => campaignView(c, views, counts.get(c.id) ?? {})),
        next_cursor: nextCursor,
      };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware-campaigns/:id',
      tag: 'firmware',
      summary:
        'One firmware campaign: plan summary, devices left out, job (phase, device counts by state) and ' +
        'the first failures',
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      success: { status: 200, description: 'The campaign', body: CampaignView },
      errors: [400, 404],
    },
    async ({ params }) => detail(params.id),
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware-campaigns/:id/devices',
      tag: 'firmware',
      summary: "A campaign's devices by name: job state and per-component results (the plan until the device has run)",
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      query: DeviceQuery,
      success: { status: 200, description: "The campaign's devices", body: CampaignDevicePage },
      errors: [400, 404],
    },
    async ({ params, query: q }) => {
      await campaignJob(db, params.id);
      const after = decodeCursor(q.cursor, z.tuple([z.string(), uuid]));
      const rows = await listCampaignDevices(db, {
        campaignId: params.id,
        limit: q.limit + 1,
        after: after && { name: after[0], jobId: after[1] },
        state: q.state,
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.name, last.job.id]);
      return {
        items: page.map(campaignDeviceView),
        next_cursor: nextCursor,
      };
    },
  );

  for (const [signal, summary] of Object.entries(signals) as [CampaignSignal, string][]) {
    defineRoute(
      app,
      doc,
      {
        method: 'POST',
        url: `/v1/firmware-campaigns/:id/${signal}`,
        tag: 'firmware',
        summary: `${summary} (intent)`,
        role: 'operator',
        sites: 'scoped',
        params: IdParam,
        success: jobAccepted("The campaign's job"),
        errors: [400, 404, 409],
      },
      async ({ request, reply, params }) => {
        const job = await signalCampaign(db, callerOf(request), params.id, signal, twoPerson);
        return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
      },
    );
  }

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/firmware-campaigns/:id/cancel',
      tag: 'firmware',
      summary:
        'Cancel the campaign as POST /v1/jobs/{id}/cancel does: running device updates are cancelled, the ' +
        'rest never start (intent)',
      role: 'operator',
      sites: 'scoped',
      params: IdParam,
      success: jobAccepted("The campaign's job, now cancelling"),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params }) => {
      const job = await cancelCampaign(db, callerOf(request), params.id);
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/sites/:id/maintenance-windows',
      tag: 'firmware',
      summary:
        "The site's weekly maintenance windows (UTC), with an ETag; campaigns start device updates only " +
        'inside one, and anytime when there are none',
      role: 'viewer',
      sites: 'scoped',
      params: SiteIdParam,
      success: { status: 200, description: 'The windows', body: WindowsView, headers: ['ETag'] },
      errors: [404],
    },
    async ({ reply, params }) => {
      if (!(await getSite(db, params.id))) throw notFound('site', params.id);
      const { view, etag } = windowsView(await siteMaintenanceWindows(db, params.id));
      return reply.header('etag', etag).send(view);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'PUT',
      url: '/v1/sites/:id/maintenance-windows',
      tag: 'firmware',
      summary:
        "Replace the site's weekly maintenance windows (UTC); an empty list means always open. If-Match " +
        'honoured (412 when they changed since read)',
      role: 'admin',
      sites: 'scoped',
      params: SiteIdParam,
      body: WindowsBody,
      success: { status: 200, description: 'The windows', body: WindowsView, headers: ['ETag'] },
      errors: [400, 404, 412],
    },
    async ({ request, reply, params, body }) => {
      const windows = body.windows.map((w) => {
        const [h, m] = w.start.split(':').map(Number);
        return { weekdays: w.weekdays, startMinute: h! * 60 + m!, durationMinutes: w.duration_minutes };
      });
      await setMaintenanceWindows(db, callerOf(request), {
        siteId: params.id,
        windows,
        ifMatch: request.headers['if-match'],
      });
      const { view, etag } = windowsView(windows);
      return reply.header('etag', etag).send(view);
    },
  );
}
