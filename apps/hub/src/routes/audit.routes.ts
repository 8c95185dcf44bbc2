import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { auditChainPage, listAudit, type Db } from '@fleet/db';
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

const ExportQuery = z
  .object({
    from_id: z.coerce.number().int().min(1).optional().describe('The first row to export (default: the first)'),
    to_id: z.coerce.number().int().min(1).optional().describe('The last row to export (default: the last)'),
  })
  .strict();

/** Rows read per statement while exporting. */
const EXPORT_PAGE = 1000;

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

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/audit/export',
      tag: 'audit',
      summary:
        'The audit log as its hash chain, oldest first, for verification outside Fleet (docs/security.md, ' +
        '"Audit log"): NDJSON, one row a line with its fields, prev_hash, hash and `canonical` (the text hash is the ' +
        "sha256 of: a JSON array of the fields, then prev_hash). Each line's prev_hash is the hash of the line before",
      role: 'admin',
      query: ExportQuery,
      success: { status: 200, description: 'One audit row per line, in chain (id) order', body: 'ndjson' },
      errors: [400],
    },
    async ({ reply, query: q }) => {
      if (q.from_id !== undefined && q.to_id !== undefined && q.from_id > q.to_id)
        throw invalid('query.to_id', 'must not be below from_id');
      async function* lines() {
        let afterId = (q.from_id ?? 1) - 1;
        for (;;) {
          const page = await auditChainPage(db, { afterId, toId: q.to_id, limit: EXPORT_PAGE });
          if (page.length) yield page.map((r) => `${JSON.stringify(r)}\n`).join('');
          if (page.length < EXPORT_PAGE) return;
          afterId = page.at(-1)!.id;
        }
      }
      return reply.type('application/x-ndjson').send(Readable.from(lines()));
    },
  );
}
