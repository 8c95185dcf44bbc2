import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Db } from '@fleet/db';
import { defaultBmcRotationConcurrency, jobKindTable, maxBmcRotationConcurrency } from '@fleet/domain';
import { OverrideQuarantine } from '../hold-override.js';
import { IdParam } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { rotateDeviceBmcPassword, rotateRackBmcPasswords } from '../services/bmc-credentials.service.js';
import { callerOf } from '../services/caller.js';
import { jobAccepted, jobView, type ViewContext } from '../views.js';

const secretNote =
  "the satellite generates the password, stages it in its own secret store, applies it through the BMC's " +
  'AccountService, proves it with a fresh login and only then makes it current, or rolls the BMC and the store ' +
  'back; it never reaches the hub, Postgres, Temporal or logs';

/** BMC credential rotation (docs/security.md#bmc-credential-rotation): one device, or a rack a few at a time. */
export function bmcCredentialRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/devices/:id/bmc-password-rotation',
      tag: 'credentials',
      summary:
        `Rotate the password of the device's BMC account (intent): ${secretNote}. 409 when its BMC credential ` +
        "reference is also another device's (or its own NVOS's), or on a held device (quarantined, remediating, " +
        'rma) unless override_quarantine gives a reason',
      role: jobKindTable['bmc.password_rotation'].role,
      sites: 'scoped',
      params: IdParam,
      // Optional: only a held device needs a body, to override its hold.
      body: z.object({ override_quarantine: OverrideQuarantine.optional() }).strict().optional(),
      success: jobAccepted('The job (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const job = await rotateDeviceBmcPassword(db, callerOf(request), {
        device_id: params.id,
        override_quarantine: body?.override_quarantine,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/racks/:id/bmc-password-rotation',
      tag: 'credentials',
      summary:
        `Rotate the BMC passwords of every device of a rack (intent), at most \`concurrency\` at a time: ` +
        `${secretNote}. ` +
        'Each device has a child job with its outcome; the first failure stops new starts. 409 naming every device ' +
        'whose BMC credential reference is not its own, naming the held devices unless override_quarantine gives a ' +
        'reason, or when a device is busy',
      role: jobKindTable['rack.bmc_password_rotation'].role,
      sites: 'scoped',
      params: IdParam,
      body: z
        .object({
          concurrency: z.number().int().min(1).max(maxBmcRotationConcurrency).default(defaultBmcRotationConcurrency),
          override_quarantine: OverrideQuarantine.optional(),
        })
        .strict()
        .optional(),
      success: jobAccepted('The rack job; a child job per device (Location: /v1/jobs/{id})'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const job = await rotateRackBmcPasswords(db, callerOf(request), {
        rack_id: params.id,
        concurrency: body?.concurrency ?? defaultBmcRotationConcurrency,
        override_quarantine: body?.override_quarantine,
      });
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );
}
