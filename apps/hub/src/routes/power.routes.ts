import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getRack, type Db } from '@fleet/db';
import { ColdRebootOverrides, lifecycleStates, NodeType, PowerAction, RackPowerOp, jobKindTable } from '@fleet/domain';
import { jobOrApprovalAccepted, sendOutcome } from '../approvals/views.js';
import type { TwoPersonConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { OverrideQuarantine } from '../hold-override.js';
import { repeated } from '../pagination.js';
import { callerOf } from '../services/caller.js';
import { IdParam } from '../params.js';
import { checkSites, scopedSiteFilter } from '../services/site-scope.js';
import { bulkBodyLimit, defineRoute, type ApiDoc } from '../route.js';
import { siteId } from '../validation.js';
import { requestGate } from '../services/approvals.service.js';
import { powerBatch } from '../services/power-batch.service.js';
import { rackSequence } from '../services/rack-power.service.js';
import type { ViewContext } from '../views.js';
import { checkRoleFilter, roleFilter } from '../inventory-filters.js';

const BatchBody = z
  .object({
    action: PowerAction,
    /** Which devices: a rack, a site, or an inventory filter (exactly one). */
    rack_id: z.string().uuid('must be a UUID').optional(),
    site_id: siteId.optional(),
    filter: z
      .object({
        site_id: repeated(siteId),
        rack_id: repeated(z.string().uuid()),
        role: roleFilter,
        node_type: repeated(NodeType),
        lifecycle_state: repeated(z.enum(lifecycleStates)),
      })
      .strict()
      .optional(),
    /** Include held devices (quarantined, remediating, rma) instead of skipping them. */
    override_quarantine: OverrideQuarantine.optional(),
  })
  .strict()
  .refine((b) => [b.rack_id, b.site_id, b.filter].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of rack_id, site_id or filter',
  });

export function powerRoutes(
  app: FastifyInstance,
  doc: ApiDoc,
  db: Db,
  views: ViewContext,
  twoPerson: TwoPersonConfig,
): void {
  const rackOrThrow = async (id: string) => {
    const rack = await getRack(db, id);
    if (!rack) throw new ApiError('NOT_FOUND', `rack ${id} does not exist`);
    return rack;
  };

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/racks/:id/power',
      tag: 'power',
      summary:
        'Ordered rack power (intent): on = shelves, switches, compute; off = compute (graceful), switches, ' +
        'shelves; cycle = off then on. One sequence per rack (409 otherwise). 409 naming the held devices ' +
        '(quarantined, remediating, rma) unless override_quarantine gives a reason. off and cycle fall under the ' +
        'two-person rule rack.power_off',
      role: jobKindTable['rack.power'].role,
      sites: 'scoped',
      params: IdParam,
      body: z.object({ op: RackPowerOp, override_quarantine: OverrideQuarantine.optional() }).strict(),
      success: jobOrApprovalAccepted('The rack job; a child job per device'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const out = await rackSequence(db, callerOf(request), requestGate(twoPerson), {
        kind: 'rack.power',
        rack_id: params.id,
        op: body.op,
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
      url: '/v1/racks/:id/cold-reboot',
      tag: 'power',
      summary:
        'NVL72 cold-reboot runbook (RMS ExecuteColdReboot stages, gates and timings; any timing can be overridden). ' +
        '409 naming the held devices (quarantined, remediating, rma) unless override_quarantine gives a reason. ' +
        'Two-person rule rack.cold_reboot',
      role: jobKindTable['rack.cold_reboot'].role,
      sites: 'scoped',
      params: IdParam,
      body: z
        .object({ timings: ColdRebootOverrides.optional(), override_quarantine: OverrideQuarantine.optional() })
        .strict(),
      success: jobOrApprovalAccepted('The cold-reboot job with its stage timeline'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const out = await rackSequence(db, callerOf(request), requestGate(twoPerson), {
        kind: 'rack.cold_reboot',
        rack_id: params.id,
        timings: body.timings ?? {},
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
      url: '/v1/power-batches',
      bodyLimit: bulkBodyLimit,
      tag: 'power',
      summary:
        'One power action on many devices (a rack, a site or an inventory filter): a parent job with a ' +
        'child per device; refused devices listed with their reason, held ones (quarantined, remediating, rma) ' +
        'skipped unless override_quarantine gives a reason; 409 when it would cut power shelves under trays it ' +
        'also acts on. Two-person rule batch.power_off for any action but on',
      role: jobKindTable['batch.power'].role,
      sites: 'scoped',
      body: BatchBody,
      success: jobOrApprovalAccepted(
        'The parent job; result.refused lists refused devices, result.skipped the held ones left out (state, ' +
          'since, reason)',
      ),
      errors: [400, 404, 409],
    },
    async ({ request, reply, body }) => {
      // A site-scoped token's selection keeps to its sites: named ones are checked, a filter without sites gets its.
      const actor = request.actor!;
      if (body.rack_id) checkSites(actor, [(await rackOrThrow(body.rack_id)).siteId], 'body.rack_id', 'body.rack_id');
      if (body.site_id) checkSites(actor, [body.site_id], `site/${body.site_id}`, 'body.site_id');
      await checkRoleFilter(db, body.filter?.role, 'body.filter.role');
      const filters = body.filter
        ? {
            siteId: scopedSiteFilter(actor, body.filter.site_id, 'body.filter.site_id'),
            rackId: body.filter.rack_id,
            role: body.filter.role,
            nodeType: body.filter.node_type,
            lifecycleState: body.filter.lifecycle_state,
          }
        : body.rack_id
          ? { rackId: [body.rack_id] }
          : { siteId: [body.site_id!] };
      const out = await powerBatch(db, callerOf(request), requestGate(twoPerson), {
        action: body.action,
        selection: body.filter ?? (body.rack_id ? { rack_id: body.rack_id } : { site_id: body.site_id }),
        filters,
        rack_id: body.rack_id,
        site_id: body.site_id,
        override_quarantine: body.override_quarantine,
      });
      return sendOutcome(reply, out, views);
    },
  );
}
