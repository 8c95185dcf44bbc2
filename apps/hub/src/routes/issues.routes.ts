import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listInventoryIssues, syncIssueCodes, type Db } from '@fleet/db';
import { limitSchema, repeated } from '../pagination.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { IssuePage, issueView } from '../views.js';

/**
 * Issues the mirror shows on a device, then those a sync met applying NetBox objects: a code filter allows any of them.
 */
const codes = [
  'missing_bmc_address',
  'duplicate_ip',
  'unknown_node_type',
  'missing_credential_ref',
  'invalid_management_profile',
  'missing_nvos_endpoint',
  'invalid_nvos_endpoint',
  ...syncIssueCodes,
] as const;

export function issueRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/inventory-issues',
      tag: 'inventory',
      summary: 'Inventory data a sync could not use (open ones unless include_resolved=true)',
      role: 'viewer',
      query: z
        .object({
          limit: limitSchema,
          cursor: z.coerce.number().int().min(0).optional(),
          device_id: repeated(z.string().uuid('must be a UUID')),
          code: repeated(z.enum(codes)),
          include_resolved: z.enum(['true', 'false']).default('false'),
        })
        .strict(),
      success: { status: 200, description: 'Issues, oldest first', body: IssuePage },
      errors: [400],
    },
    async ({ query: q }) => {
      const rows = await listInventoryIssues(db, {
        limit: q.limit + 1,
        ...(q.device_id ? { deviceId: q.device_id } : {}),
        ...(q.code ? { code: q.code } : {}),
        includeResolved: q.include_resolved === 'true',
        ...(q.cursor !== undefined ? { afterId: q.cursor } : {}),
      });
      const page = rows.slice(0, q.limit);
      return {
        items: page.map(issueView),
        next_cursor: rows.length > q.limit ? String(page[page.length - 1]!.id) : null,
      };
    },
  );
}
