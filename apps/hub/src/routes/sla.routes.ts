import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  deliveriesOfBreaches,
  getSlaBreach,
  listSlaBreaches,
  slaBreachJson,
  webhookDeliveryStatuses,
  type Db,
  type SlaBreach,
  type WebhookDelivery,
} from '@fleet/db';
import { slaEvents, slaObjectTypes, slaResolutions, slaWatches } from '@fleet/domain';
import { notFound } from '../errors.js';
import { cursorPage, decodeCursor, limitSchema, repeated } from '../pagination.js';
import { IdParam, uuid } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { pageOf, timestamp } from '../views.js';

const DeliveryView = z
  .object({
    id: z.uuid().describe('Sent as X-Fleet-Delivery: the receiver drops a repeat by it'),
    webhook: z.string().describe("The agent config's name for the webhook"),
    event: z.enum(slaEvents),
    status: z.enum(webhookDeliveryStatuses),
    attempts: z.number().int(),
    next_attempt_at: timestamp.nullable().describe('When a pending delivery is tried again'),
    last_status: z.number().int().nullable().describe("The receiver's last HTTP status"),
    last_error: z.string().nullable(),
    delivered_at: timestamp.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

const SlaBreachView = z
  .object({
    id: z.uuid(),
    object_type: z.enum(slaObjectTypes).describe('A campaign is a job (GET /v1/firmware-campaigns/{object_id})'),
    object_id: z.uuid(),
    object_name: z.string().nullable().describe("The device's name; a job's device, rack or campaign name"),
    site_id: z.string().nullable(),
    sla_key: z.string().describe('lifecycle:<state>, job_running:<kind>, job_queued or job_stage:<kind>:<stage>'),
    watch: z.enum(slaWatches),
    state: z.string().describe('The lifecycle state, the job state, or the stage the job showed'),
    job_kind: z.string().nullable(),
    limit_s: z.number().int(),
    since: timestamp.describe('When the object entered the state'),
    due_at: timestamp.describe('since + limit_s'),
    breached_at: timestamp.describe('When the watch found it past its limit'),
    overdue_s: z.number().int().describe('Seconds past the limit: now while open, at its resolution once resolved'),
    resolved_at: timestamp.nullable(),
    resolution: z
      .enum(slaResolutions)
      .nullable()
      .describe(
        'cleared: no longer past that limit in that state (moved on, ended, deleted); unwatched: limit removed',
      ),
    deliveries: z.array(DeliveryView).describe('Its webhook escalations'),
  })
  .meta({ id: 'SlaBreach' });
const SlaBreachPage = pageOf(SlaBreachView, 'SlaBreachPage');

const SlaBreachQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    status: z.enum(['open', 'resolved']).optional().describe('Both when absent'),
    object_type: repeated(z.enum(slaObjectTypes)),
    object_id: repeated(uuid).describe("A device's or a job's breaches"),
    site_id: repeated(z.string().min(1)),
    sla_key: repeated(z.string().min(1).max(200)),
  })
  .strict();

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function breachView(b: SlaBreach, deliveries: WebhookDelivery[], now: Date): z.infer<typeof SlaBreachView> {
  return {
    ...slaBreachJson(b, now),
    deliveries: deliveries.map((d) => ({
      id: d.id,
      webhook: d.webhook,
      event: d.event,
      status: d.status,
      attempts: d.attempts,
      next_attempt_at: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
      last_status: d.lastStatus,
      last_error: d.lastError,
      delivered_at: iso(d.deliveredAt),
    })),
  };
}

/** The breaches' views, with their deliveries in one query for the page. */
async function breachViews(db: Db, breaches: SlaBreach[]) {
  const deliveries = await deliveriesOfBreaches(
    db,
    breaches.map((b) => b.id),
  );
  const now = new Date();
  return breaches.map((b) =>
    breachView(
      b,
      deliveries.filter((d) => d.breachId === b.id),
      now,
    ),
  );
}

/**
 * Stuck-state SLA breaches (docs/sla.md), found by the workflow agent: a device too long in a lifecycle state, a job
 * running or queued too long, a job (a campaign's phase, an enrolment's decision) too long in one stage.
 */
export function slaRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/sla-breaches',
      tag: 'sla',
      summary:
        'Stuck-state SLA breaches, newest first by breached_at then id: open ones until their object moves on, with ' +
        'their webhook deliveries; object_id lists a device, job or campaign',
      role: 'viewer',
      query: SlaBreachQuery,
      success: { status: 200, description: 'Breaches, newest first', body: SlaBreachPage },
      errors: [400],
    },
    async ({ query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.string().datetime(), uuid]));
      const rows = await listSlaBreaches(db, {
        limit: q.limit + 1,
        ...(after ? { after: { breachedAt: new Date(after[0]), id: after[1] } } : {}),
        ...(q.status ? { open: q.status === 'open' } : {}),
        objectType: q.object_type,
        objectId: q.object_id,
        siteId: q.site_id,
        slaKey: q.sla_key,
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.breachedAt.toISOString(), last.id]);
      return { items: await breachViews(db, page), next_cursor: nextCursor };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/sla-breaches/:id',
      tag: 'sla',
      summary: 'One SLA breach, with its webhook deliveries',
      role: 'viewer',
      params: IdParam,
      success: { status: 200, description: 'The breach', body: SlaBreachView },
    },
    async ({ params }) => {
      const breach = await getSlaBreach(db, params.id);
      if (!breach) throw notFound('SLA breach', params.id);
      const [view] = await breachViews(db, [breach]);
      return view;
    },
  );
}
