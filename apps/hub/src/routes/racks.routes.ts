import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getRack, getSyncState, rackDevices, type Db } from '@fleet/db';
import { ApiError } from '../errors.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { rackView } from '../views.js';

const IdParam = z.object({ id: z.string().uuid('must be a UUID') }).strict();

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
      success: [200, 'The rack'],
      errors: [400, 404],
    },
    async ({ params }) => {
      const rack = await getRack(db, params.id);
      if (!rack) throw new ApiError('NOT_FOUND', `rack ${params.id} does not exist`);
      const devices = await rackDevices(db, rack.id);
      return {
        ...rackView(rack, await getSyncState(db, 'netbox')),
        elevation: devices.map((d) => ({
          device_id: d.id,
          name: d.name,
          position: d.position,
          face: d.face,
          u_height: d.uHeight,
          role: d.role,
          node_type: d.nodeType,
          power_state: d.powerState,
        })),
      };
    },
  );
}
