import type { FastifyInstance } from 'fastify';
import { hardwareList, HardwareList, jobKindList, JobKindList } from '../catalog/views.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { WhoamiView } from '../views.js';

/** What the hub knows rather than stores: the hardware table, the job-kind registry, and who the caller is. */
export function catalogRoutes(app: FastifyInstance, doc: ApiDoc): void {
  const hardware = hardwareList();
  const kinds = jobKindList();

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/hardware',
      tag: 'reference',
      summary:
        'The hardware table: every node type with its kind, vendor, family, rack type, managers, management and ' +
        'firmware profiles, reset semantics and support status',
      role: 'viewer',
      sites: 'fleet',
      success: { status: 200, description: 'Node types', body: HardwareList },
    },
    async () => hardware,
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/job-kinds',
      tag: 'reference',
      summary:
        'The job-kind registry: per kind its workflow type, least role, scope, guard, whether it is destructive ' +
        'and what it does',
      role: 'viewer',
      sites: 'fleet',
      success: { status: 200, description: 'Job kinds', body: JobKindList },
    },
    async () => kinds,
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/whoami',
      tag: 'reference',
      summary: "The caller's token name and role (any valid token), so a UI shows only the controls the role may use",
      role: 'viewer',
      sites: 'fleet',
      success: { status: 200, description: 'The caller', body: WhoamiView },
    },
    async ({ request }) => {
      const { name, role, sites } = request.actor!;
      return { name, role, sites: sites && [...sites] };
    },
  );
}
