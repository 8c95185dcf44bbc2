import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listAudit, type Db } from '@fleet/db';
import { invalid } from '../errors.js';
import { cursorPage, decodeCursor, limitSchema, repeated } from '../pagination.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { AuditPage, auditView } from '../views.js';

const rfc3339 = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 time, e.g. 2026-01-02T03:04:05Z' });

const AuditQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    actor: repeated(z.string().min(1).max(200)).describe('Token names'),
    action: repeated(z.string().min(1).max(200)).describe('e.g. device.power, site.create, job.cancel'),
    target: repeated(z.string().min(1).max(500)).describe('What was acted on, e.g. device/<id>, job/<id>, site/<id>'),
    since: rfc3339.optional().describe('Rows written at or after this time'),
    until: rfc3339.optional().describe('Rows written at or before this time'),
  })
  .strict();

export function auditRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/audit',
      tag: 'audit',
      summary:
        'The audit log, newest first: every mutating request, accepted or refused, with its actor and outcome. ' +
        'Viewers may read it: operators on shift need to know who did what to a device, the rows hold no secrets ' +
        '(credentials are references, tokens never appear) and the web UI shows a device its trail',
      role: 'viewer',
      query: AuditQuery,
      success: { status: 200, description: 'Audit rows, newest first', body: AuditPage },
      errors: [400],
    },
    async ({ query: q }) => {
      const since = q.since ? new Date(q.since) : undefined;
      const until = q.until ? new Date(q.until) : undefined;
      if (since && until && since > until) throw invalid('query.until', 'must not be before since');
      const after = decodeCursor(q.cursor, z.tuple([z.number().int()]));
      const rows = await listAudit(db, {
        limit: q.limit + 1,
        afterId: after?.[0],
        actor: q.actor,
        action: q.action,
        target: q.target,
        since,
        until,
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.id]);
      return { items: page.map(auditView), next_cursor: nextCursor };
    },
  );
}
