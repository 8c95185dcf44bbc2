import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { getFirmwareManifest, listFirmwareManifests, type Db } from '@fleet/db';
import { NodeType } from '@fleet/domain';
import { notFound } from '../errors.js';
import { etag, isNotModified } from '../firmware/preconditions.js';
import { ManifestPage, ManifestView, manifestView } from '../firmware/views.js';
import { decodeCursor, cursorPage, limitSchema, repeated } from '../pagination.js';
import { IdParam, uuid } from '../params.js';
import { bulkBodyLimit, defineRoute, sendCreated, type ApiDoc } from '../route.js';
import { callerOf } from '../services/caller.js';
import {
  createManifest,
  deleteManifest,
  makeDefaultManifest,
  replaceManifest,
  type ManifestInput,
  type ManifestRef,
} from '../services/firmware-manifests.service.js';

const ManifestFields = z
  .object({
    name: z.string().min(1).max(200),
    hardware_type: NodeType,
    steps: z
      .array(
        z
          .object({
            name: z.string().min(1).max(100),
            package_id: uuid,
            /** Redfish update Targets; empty = the whole package. */
            targets: z.array(z.string().min(1).max(512)).max(64).default([]),
            components: z
              .array(z.object({ id: z.string().min(1).max(128), version: z.string().min(1).max(128) }).strict())
              .min(1)
              .max(64),
          })
          .strict(),
      )
      .min(1)
      .max(32)
      .superRefine((steps, ctx) => {
        const seen = new Set<string>();
        steps.forEach((s, i) => {
          if (seen.has(s.name))
            ctx.addIssue({
              code: 'custom',
              path: [i, 'name'],
              message: `step name ${s.name} is used twice; step names must be unique`,
            });
          seen.add(s.name);
        });
      }),
  })
  .strict();
const NewManifest = ManifestFields.extend({ default: z.boolean().default(false) }).strict();

const ManifestQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    hardware_type: repeated(NodeType),
    default: z.enum(['true', 'false']).optional(),
  })
  .strict();

const manifestInput = (body: z.infer<typeof ManifestFields>): ManifestInput => ({
  name: body.name,
  hardwareType: body.hardware_type,
  steps: body.steps.map((s) => ({
    name: s.name,
    packageId: s.package_id,
    targets: s.targets,
    components: s.components,
  })),
});

const manifestRef = (request: FastifyRequest, id: string): ManifestRef => ({
  id,
  ifMatch: request.headers['if-match'],
});

/** Firmware manifests: for one hardware type, the packages to push in order and the versions they install. */
export function firmwareManifestRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/firmware/manifests',
      bodyLimit: bulkBodyLimit,
      tag: 'firmware',
      summary:
        'Create a firmware manifest: for one hardware type, the packages to push in order and the ' +
        'component versions they install; default=true makes it the default for its type. Idempotency-Key ' +
        'honoured',
      role: 'operator',
      body: NewManifest,
      success: { status: 201, description: 'The manifest', body: ManifestView, headers: ['Location', 'ETag'] },
      errors: [400, 409],
    },
    async ({ request, reply, body }) => {
      const created = await createManifest(db, callerOf(request), {
        ...manifestInput(body),
        isDefault: body.default,
      });
      return sendCreated(reply, created);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware/manifests',
      tag: 'firmware',
      summary: 'List firmware manifests by name',
      role: 'viewer',
      sites: 'fleet',
      query: ManifestQuery,
      success: { status: 200, description: 'Manifests', body: ManifestPage },
      errors: [400],
    },
    async ({ query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.string()]));
      const rows = await listFirmwareManifests(db, {
        limit: q.limit + 1,
        ...(after ? { afterName: after[0] } : {}),
        ...(q.hardware_type ? { hardwareType: q.hardware_type } : {}),
        ...(q.default ? { isDefault: q.default === 'true' } : {}),
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.name]);
      return {
        items: page.map(manifestView),
        next_cursor: nextCursor,
      };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware/manifests/:id',
      tag: 'firmware',
      summary: 'One firmware manifest (ETag: its revision)',
      role: 'viewer',
      sites: 'fleet',
      params: IdParam,
      success: { status: 200, description: 'The manifest', body: ManifestView, headers: ['ETag'] },
      alsoSucceeds: [{ status: 304, description: 'Not modified (If-None-Match)', headers: ['ETag'] }],
      errors: [400, 404],
    },
    async ({ request, reply, params }) => {
      const m = await getFirmwareManifest(db, params.id);
      if (!m) throw notFound('firmware manifest', params.id);
      const tag = etag(m.revision);
      if (isNotModified(request, tag)) return reply.status(304).header('etag', tag).send();
      return reply.header('etag', tag).send(manifestView(m));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'PUT',
      url: '/v1/firmware/manifests/:id',
      tag: 'firmware',
      summary: 'Replace a manifest (If-Match: its ETag, else 412); the default of a type cannot move to another type',
      role: 'operator',
      params: IdParam,
      body: ManifestFields,
      success: { status: 200, description: 'The manifest, next revision', body: ManifestView, headers: ['ETag'] },
      errors: [400, 404, 409, 412],
    },
    async ({ request, reply, params, body }) => {
      const m = await replaceManifest(db, callerOf(request), manifestRef(request, params.id), manifestInput(body));
      return reply.header('etag', etag(m.revision)).send(manifestView(m));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/firmware/manifests/:id/default',
      tag: 'firmware',
      summary:
        'Make a manifest the default for its hardware type; the previous default stops being one in the ' +
        'same transaction',
      role: 'operator',
      params: IdParam,
      success: { status: 200, description: 'The manifest', body: ManifestView, headers: ['ETag'] },
      errors: [400, 404, 412],
    },
    async ({ request, reply, params }) => {
      const m = await makeDefaultManifest(db, callerOf(request), manifestRef(request, params.id));
      return reply.header('etag', etag(m.revision)).send(manifestView(m));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'DELETE',
      url: '/v1/firmware/manifests/:id',
      tag: 'firmware',
      summary:
        'Delete a manifest (If-Match honoured); devices of its type have no desired firmware if it was the default',
      role: 'admin',
      params: IdParam,
      success: { status: 204, description: 'Deleted' },
      errors: [400, 404, 412],
    },
    async ({ request, reply, params }) => {
      await deleteManifest(db, callerOf(request), manifestRef(request, params.id));
      return reply.status(204).send();
    },
  );
}
