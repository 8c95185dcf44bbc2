import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { complianceStatuses, complianceSummary, listDeviceCompliance, type Db } from '@fleet/db';
import { NodeType } from '@fleet/domain';
import { CompliancePage, ComplianceSummaryView, complianceView } from '../firmware/views.js';
import { decodeCursor, cursorPage, limitSchema, repeated } from '../pagination.js';
import { uuid } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { siteId } from '../validation.js';

const ComplianceFilters = z
  .object({
    site_id: repeated(siteId),
    rack_id: repeated(uuid),
    hardware_type: repeated(NodeType),
  })
  .strict();
const ComplianceQuery = ComplianceFilters.extend({
  limit: limitSchema,
  cursor: z.string().optional(),
  status: repeated(z.enum(complianceStatuses)),
}).strict();

const complianceFilters = (q: z.infer<typeof ComplianceFilters>) => ({
  ...(q.site_id ? { siteId: q.site_id } : {}),
  ...(q.rack_id ? { rackId: q.rack_id } : {}),
  ...(q.hardware_type ? { nodeType: q.hardware_type } : {}),
});

/** Every device against its type's default manifest. */
export function firmwareComplianceRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware/compliance',
      tag: 'firmware',
      summary:
        "Every device against its type's default manifest: compliant, outdated (a component runs another " +
        'version), unknown (a component not reported yet) or no_manifest; by device name',
      role: 'viewer',
      query: ComplianceQuery,
      success: { status: 200, description: 'Devices with their compliance', body: CompliancePage },
      errors: [400],
    },
    async ({ query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.string(), uuid]));
      const rows = await listDeviceCompliance(db, {
        ...complianceFilters(q),
        limit: q.limit + 1,
        ...(q.status ? { status: q.status } : {}),
        ...(after ? { after: { name: after[0], id: after[1] } } : {}),
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.name, last.deviceId]);
      return {
        items: page.map(complianceView),
        next_cursor: nextCursor,
      };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware/compliance/summary',
      tag: 'firmware',
      summary: 'Device counts by compliance status',
      role: 'viewer',
      query: ComplianceFilters,
      success: { status: 200, description: 'Counts by status', body: ComplianceSummaryView },
      errors: [400],
    },
    async ({ query }) => {
      const byStatus = await complianceSummary(db, complianceFilters(query));
      return { total: Object.values(byStatus).reduce((a, b) => a + b, 0), by_status: byStatus };
    },
  );
}
