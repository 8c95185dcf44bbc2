import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { getFacilityEvent, listFacilityEvents, type Db, type FacilityEvent } from '@fleet/db';
import {
  facilityEventKinds,
  facilityEventStates,
  facilityResponses,
  facilitySeverities,
  type FacilityStep,
} from '@fleet/domain';
import type { RemediationConfig } from '../config.js';
import { notFound } from '../errors.js';
import { cursorPage, decodeCursor, limitSchema, repeated } from '../pagination.js';
import { IdParam, uuid } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { callerOf } from '../services/caller.js';
import { decideFacilityEvent, receiveFacilityEvent } from '../services/facility.service.js';
import { pageOf, timestamp } from '../views.js';

const rfc3339 = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 time, e.g. 2026-01-02T03:04:05Z' });
const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max);

const NewFacilityEvent = z
  .object({
    external_id: text(200).describe("The system's own id of the event: a repeat with the same id answers the first"),
    kind: z.enum(facilityEventKinds),
    severity: z.enum(facilitySeverities),
    critical: z
      .boolean()
      .default(false)
      .describe("Act now: the racks are powered off without waiting for an operator's approval"),
    rack_ids: z.array(uuid).min(1, 'name at least one rack').max(100).describe('The racks it is about (a row: each)'),
    location: text(200).optional().describe('Where, as the system names it (a row, a room); for people'),
    message: text(2000),
    occurred_at: rfc3339.optional().describe('When the system saw it'),
  })
  .strict()
  .meta({ id: 'NewFacilityEvent' });

const Decision = z
  .object({ reason: text(2000).describe('Kept in the audit log and with the event') })
  .strict()
  .meta({ id: 'FacilityDecision' });

const FacilityEventView = z
  .object({
    id: uuid,
    source: z.string().describe('The token that posted it'),
    external_id: z.string(),
    kind: z.enum(facilityEventKinds),
    severity: z.enum(facilitySeverities),
    critical: z.boolean(),
    rack_ids: z.array(uuid),
    location: z.string().nullable(),
    message: z.string(),
    occurred_at: timestamp.nullable(),
    received_at: timestamp,
    grading: z.object({
      response: z.enum(facilityResponses),
      approval: z.enum(['operator', 'none']).nullable().describe('Who lets a power-off go: none for a critical event'),
      steps: z.array(z.enum(['quarantine', 'power_off'] satisfies FacilityStep[])).describe('In the order made'),
      rule: z.string(),
    }),
    state: z.enum(facilityEventStates),
    racks: z.array(
      z.object({
        rack_id: uuid,
        quarantine: z
          .array(
            z.object({
              device_id: uuid,
              name: z.string(),
              job_id: uuid.nullable(),
              skipped: z.string().nullable().describe('Why no job: held already, busy with another job'),
            }),
          )
          .nullable()
          .describe('Set once the devices were held'),
        power_off: z
          .object({
            job_id: uuid.nullable(),
            refused: z.string().nullable().describe('Why it could not start; approve again once it can'),
            outcome: z.string().nullable().describe("The job's end state"),
          })
          .nullable(),
      }),
    ),
    job_ids: z.array(uuid),
    decision: z
      .object({ action: z.enum(['approve', 'reject']), by: z.string(), at: timestamp, reason: z.string() })
      .nullable(),
    updated_at: timestamp,
  })
  .meta({ id: 'FacilityEvent' });
const FacilityEventPage = pageOf(FacilityEventView, 'FacilityEventPage');

function facilityEventView(e: FacilityEvent): z.infer<typeof FacilityEventView> {
  return {
    id: e.id,
    source: e.source,
    external_id: e.externalId,
    kind: e.kind,
    severity: e.severity,
    critical: e.critical,
    rack_ids: e.rackIds,
    location: e.location,
    message: e.message,
    occurred_at: e.occurredAt?.toISOString() ?? null,
    received_at: e.receivedAt.toISOString(),
    grading: e.grading,
    state: e.state,
    racks: e.actions.map((a) => ({
      rack_id: a.rackId,
      quarantine:
        a.quarantine?.map((d) => ({
          device_id: d.deviceId,
          name: d.name,
          job_id: d.jobId ?? null,
          skipped: d.skipped ?? null,
        })) ?? null,
      power_off: a.powerOff
        ? { job_id: a.powerOff.jobId ?? null, refused: a.powerOff.refused ?? null, outcome: a.powerOff.outcome ?? null }
        : null,
    })),
    job_ids: e.jobIds,
    decision:
      e.decision && e.decidedAt
        ? { action: e.decision, by: e.decidedBy ?? '', at: e.decidedAt.toISOString(), reason: e.decisionReason ?? '' }
        : null,
    updated_at: e.updatedAt.toISOString(),
  };
}

const FacilityEventQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    state: repeated(z.enum(facilityEventStates)),
    kind: repeated(z.enum(facilityEventKinds)),
    severity: repeated(z.enum(facilitySeverities)),
    rack_id: repeated(uuid).describe('Events naming any of these racks'),
    source: repeated(z.string().min(1).max(200)).describe('The posting tokens; a facility token reads its own only'),
  })
  .strict();

/** A building management system reads only what it posted. */
const ownSource = (request: FastifyRequest) => (request.actor?.role === 'facility' ? request.actor.name : undefined);

/**
 * Facility events (docs/day2.md, "Facility events"): a building management system posts them with its `facility`
 * token, the hub grades each and acts (record, hold the racks' devices, power the racks off), and operators approve or
 * reject a power-off that waits for them.
 */
export function facilityRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, config: RemediationConfig): void {
  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/facility-events',
      tag: 'facility',
      summary:
        "A building management system's event on racks (facility token; admin for manual entry), graded and acted " +
        "on: info is recorded; a warning holds the racks' devices; a leak or smoke warning, or any critical " +
        'severity, ' +
        'holds them and powers the racks off in order once an operator approves; an event marked critical powers ' +
        'them off at once and holds the devices after. A repeat of external_id answers the first event (200)',
      role: 'facility',
      body: NewFacilityEvent,
      success: { status: 201, description: 'The event as graded, with what it did', body: FacilityEventView },
      alsoSucceeds: [
        { status: 200, description: 'A repeat: the first event with that external_id', body: FacilityEventView },
      ],
      errors: [400, 409],
    },
    async ({ request, reply, body }) => {
      const { event, created } = await receiveFacilityEvent(db, config, callerOf(request), {
        externalId: body.external_id,
        kind: body.kind,
        severity: body.severity,
        critical: body.critical,
        rackIds: body.rack_ids,
        location: body.location,
        message: body.message,
        occurredAt: body.occurred_at ? new Date(body.occurred_at) : undefined,
      });
      if (!created) return reply.status(200).send(facilityEventView(event));
      return reply.status(201).header('location', `/v1/facility-events/${event.id}`).send(facilityEventView(event));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/facility-events',
      tag: 'facility',
      summary: 'Facility events, newest first: by state, kind, severity, rack and source (a facility token: its own)',
      role: ['viewer', 'facility'],
      query: FacilityEventQuery,
      success: { status: 200, description: 'Events, newest first', body: FacilityEventPage },
      errors: [400],
    },
    async ({ request, query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.iso.datetime(), uuid]));
      const own = ownSource(request);
      const rows = await listFacilityEvents(db, {
        limit: q.limit + 1,
        ...(after ? { after: { receivedAt: new Date(after[0]), id: after[1] } } : {}),
        state: q.state,
        kind: q.kind,
        severity: q.severity,
        rackId: q.rack_id,
        source: own ? [own] : q.source,
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.receivedAt.toISOString(), last.id]);
      return { items: page.map(facilityEventView), next_cursor: nextCursor };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/facility-events/:id',
      tag: 'facility',
      summary: 'One facility event: its grading, state, jobs and the decision on its power-off',
      role: ['viewer', 'facility'],
      params: IdParam,
      success: { status: 200, description: 'The event', body: FacilityEventView },
    },
    async ({ request, params }) => {
      const e = await getFacilityEvent(db, params.id);
      const own = ownSource(request);
      if (!e || (own && e.source !== own)) throw notFound('facility event', params.id);
      return facilityEventView(e);
    },
  );

  for (const decision of ['approve', 'reject'] as const)
    defineRoute(
      app,
      doc,
      {
        method: 'POST',
        url: `/v1/facility-events/:id/${decision}`,
        tag: 'facility',
        summary:
          decision === 'approve'
            ? 'Approve the power-off of an event awaiting it: the ordered power-off of each rack that has none yet, ' +
              'overriding the holds with the event as the reason. 409 when none can start now (the message says why)'
            : 'Reject the power-off of an event awaiting it: the racks stay on, the devices held',
        role: 'operator',
        params: IdParam,
        body: Decision,
        success: { status: 200, description: 'The event', body: FacilityEventView },
        errors: [409],
      },
      async ({ request, params, body }) =>
        facilityEventView(await decideFacilityEvent(db, config, callerOf(request), params.id, decision, body.reason)),
    );
}
