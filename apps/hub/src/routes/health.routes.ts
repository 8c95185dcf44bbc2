import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { applyHealthReadings, getDevice, getDeviceHealth, getSite, listObservationTargets, type Db } from '@fleet/db';
import { faultClasses, powerStates } from '@fleet/domain';
import type { RemediationConfig } from '../config.js';
import { notFound } from '../errors.js';
import { cursorPage, decodeCursor, limitSchema } from '../pagination.js';
import { IdParam, SiteIdParam } from '../params.js';
import { bulkBodyLimit, defineRoute, type ApiDoc } from '../route.js';
import { callerOf } from '../services/caller.js';
import { applyQuarantineRules } from '../services/remediation.service.js';
import { timestamp } from '../views.js';

/** A batch the observer posts: a cycle's changes go in batches of at most this many readings. */
export const maxReadingsPerBatch = 2000;

const Fault = z
  .object({
    class: z.enum(faultClasses),
    component: z.string().min(1).max(200).describe("The part as the BMC names it, or 'bmc'"),
    severity: z.enum(['Warning', 'Critical']),
    message: z.string().max(2000),
  })
  .strict();

const Reading = z
  .object({
    reachable: z.boolean().describe('The BMC answered'),
    credentials_ok: z.boolean().optional().describe("It accepted the device's credentials; absent when unreachable"),
    power_state: z.enum(powerStates).optional(),
    faults: z.array(Fault).max(500),
  })
  .strict();

const ObservationsBody = z
  .object({
    readings: z
      .array(
        z
          .object({
            device_id: z.string().min(1).max(100),
            observed_at: z.iso.datetime({ offset: true }).describe('When the satellite read the device'),
            reading: Reading,
          })
          .strict(),
      )
      .min(1)
      .max(maxReadingsPerBatch),
  })
  .strict();

const ObservationsApplied = z
  .object({
    applied: z.number().int().describe('Readings stored: new, changed or confirming the last one'),
    changed: z.number().int().describe('Readings that differ from the stored one: conditions judged again'),
    stale: z.number().int().describe('Readings older than the stored one: ignored'),
    unknown: z.array(z.string()).describe('Ids that are no current device of the site: ignored'),
    transitions: z.number().int().describe('Condition status changes written to device history'),
    faulty: z.array(z.uuid()).describe('Devices whose stored reading now names a fault'),
    actions: z
      .array(
        z.object({
          device_id: z.uuid(),
          rule: z.string(),
          job_id: z.uuid().nullable().describe('The quarantine or remediation job the rule created'),
          note: z.string().nullable().describe('Why the remediation waits for an operator, or why no job was made'),
        }),
      )
      .describe('What the quarantine rules did with these readings'),
  })
  .meta({ id: 'ObservationsApplied' });

const TargetPage = z
  .object({
    items: z.array(
      z.object({
        device_id: z.uuid(),
        node_type: z.string(),
        bmc_url: z.string(),
        credential_ref: z.string().describe("A reference into the site's secret store, never a secret"),
        redfish_system_id: z.string().nullable(),
      }),
    ),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'ObservationTargetPage' });

const HealthView = z
  .object({
    device_id: z.uuid(),
    reachable: z.boolean(),
    credentials_ok: z.boolean().nullable(),
    power_state: z.string().nullable(),
    faults: z.array(Fault),
    observed_at: timestamp.describe('The last reading the observer delivered'),
    changed_at: timestamp.describe('Since when the readings say this'),
    observations: z.number().int().describe('Deliveries in a row that said this'),
  })
  .meta({ id: 'DeviceHealth' });

/**
 * Health observation (docs/day2.md): the site's observer (a satellite activity) reads its devices from here and
 * delivers what changed; the console and operators read each device's last reading.
 */
export function healthRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, remediation: RemediationConfig): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/sites/:id/observation-targets',
      tag: 'health',
      summary:
        "The site's devices its observer reads (satellites): those with a node type, a BMC address and a credential " +
        'reference, by id',
      role: ['operator', 'satellite'],
      sites: 'scoped',
      params: SiteIdParam,
      query: z.object({ limit: limitSchema, cursor: z.string().optional() }).strict(),
      success: { status: 200, description: 'A page of targets', body: TargetPage },
    },
    async ({ params, query }) => {
      if (!(await getSite(db, params.id))) throw notFound('site', params.id);
      const after = decodeCursor(query.cursor, z.tuple([z.uuid()]));
      const rows = await listObservationTargets(db, params.id, query.limit + 1, after?.[0]);
      const { page, nextCursor } = cursorPage(rows, query.limit, (r) => [r.deviceId]);
      return {
        items: page.map((t) => ({
          device_id: t.deviceId,
          node_type: t.nodeType,
          bmc_url: t.bmcUrl,
          credential_ref: t.credentialRef,
          redfish_system_id: t.redfishSystemId,
        })),
        next_cursor: nextCursor,
      };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/sites/:id/observations',
      bodyLimit: bulkBodyLimit,
      tag: 'health',
      summary:
        "Deliver health readings from the site's observer (satellites): each device's whole reading, when it changed " +
        '(or to confirm a fault). Stored as state: an older reading than the stored one is ignored, ids that are no ' +
        'device of the site are named and ignored',
      role: ['operator', 'satellite'],
      sites: 'scoped',
      params: SiteIdParam,
      body: ObservationsBody,
      success: { status: 200, description: 'What was stored', body: ObservationsApplied },
    },
    async ({ request, params, body }) => {
      if (!(await getSite(db, params.id))) throw notFound('site', params.id);
      const stats = await db.transaction((tx) =>
        applyHealthReadings(
          tx,
          params.id,
          body.readings.map((r) => ({
            deviceId: r.device_id,
            observedAt: new Date(r.observed_at),
            reading: {
              reachable: r.reading.reachable,
              ...(r.reading.credentials_ok === undefined ? {} : { credentialsOk: r.reading.credentials_ok }),
              ...(r.reading.power_state === undefined ? {} : { powerState: r.reading.power_state }),
              faults: r.reading.faults,
            },
          })),
        ),
      );
      // After the readings are stored: a rule's job is its own intent and audit row (docs/day2.md).
      const actions = await applyQuarantineRules(
        db,
        callerOf(request),
        remediation,
        params.id,
        stats.faulty,
        request.log,
      );
      return {
        ...stats,
        actions: actions.map((a) => ({
          device_id: a.deviceId,
          rule: a.rule,
          job_id: a.jobId ?? null,
          note: a.note ?? null,
        })),
      };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/devices/:id/health',
      tag: 'health',
      summary: "The device's last health reading from its site's observer; 404 until it has been observed",
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      success: { status: 200, description: 'The last reading', body: HealthView },
    },
    async ({ params }) => {
      if (!(await getDevice(db, params.id))) throw notFound('device', params.id);
      const h = await getDeviceHealth(db, params.id);
      if (!h) throw notFound('health reading of device', params.id);
      return {
        device_id: h.deviceId,
        reachable: h.reachable,
        credentials_ok: h.credentialsOk,
        power_state: h.powerState,
        faults: h.faults,
        observed_at: h.observedAt.toISOString(),
        changed_at: h.changedAt.toISOString(),
        observations: h.observations,
      };
    },
  );
}
