import type { FastifyInstance } from 'fastify';
import { readRackDetail, type Db } from '@fleet/db';
import { ApiError } from '../errors.js';
import { IdParam } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { RackDetailView, rackDetailView } from '../views.js';

export function rackRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/racks/:id',
      tag: 'inventory',
      summary:
        'A rack with its elevation (position, face and height of each device, top first) and its devices by ' +
        'Fleet lifecycle state and by the conditions they hold that are not True',
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      success: { status: 200, description: 'The rack', body: RackDetailView },
      errors: [400, 404],
    },
    async ({ params }) => {
      const r = await readRackDetail(db, params.id);
      if (!r) throw new ApiError('NOT_FOUND', `rack ${params.id} does not exist`);
      return rackDetailView(r.rack, r.devices, r.summary, r.sync);
    },
  );
}
