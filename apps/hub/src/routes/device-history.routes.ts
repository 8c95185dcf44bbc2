import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { deviceHistory, getDevice, type Db } from '@fleet/db';
import { deviceAxes } from '@fleet/domain';
import { notFound } from '../errors.js';
import { decodeCursor, encodeCursor, limitSchema, repeated } from '../pagination.js';
import { IdParam } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { TransitionPage, transitionView } from '../status-views.js';

const HistoryQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    axis: repeated(z.enum(deviceAxes)).describe('Only these axes (lifecycle, health, burnin, ...); repeat for OR'),
  })
  .strict();

/** A device's history: every lifecycle move and condition status change (docs/lifecycle.md), newest first. */
export function deviceHistoryRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/devices/:id/history',
      tag: 'inventory',
      summary:
        "A device's transitions, newest first: each move of Fleet's lifecycle and each change of a condition's " +
        'status, with its writer, job and reason; filter by axis, keyset pagination',
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      query: HistoryQuery,
      success: { status: 200, description: 'Transitions', body: TransitionPage },
      errors: [400, 404],
    },
    async ({ params, query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.number().int().positive()]));
      // A deleted device keeps its history (its detail still answers), so only an unknown id is a 404.
      if (!(await getDevice(db, params.id))) throw notFound('device', params.id);
      const page = await deviceHistory(db, params.id, {
        limit: q.limit,
        cursor: after?.[0],
        axis: q.axis,
      });
      return {
        items: page.items.map(transitionView),
        next_cursor: page.nextCursor === undefined ? null : encodeCursor([page.nextCursor]),
      };
    },
  );
}
