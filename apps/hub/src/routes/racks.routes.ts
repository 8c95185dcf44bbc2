import type { FastifyInstance } from 'fastify';
import { getRack, getSyncState, rackDevices, type Db } from '@fleet/db';
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
      summary: 'A rack with its elevation (position, face and height of each device, top first)',
      role: 'viewer',
      params: IdParam,
      success: { status: 200, description: 'The rack', body: RackDetailView },
      errors: [400, 404],
    },
    async ({ params }) => {
      const rack = await getRack(db, params.id);
      if (!rack) throw new ApiError('NOT_FOUND', `rack ${params.id} does not exist`);
      return rackDetailView(rack, await rackDevices(db, rack.id), await getSyncState(db, 'netbox'));
    },
  );
}
