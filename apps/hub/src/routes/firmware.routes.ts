import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  complianceStatuses,
  complianceSummary,
  deleteFirmwareManifest,
  deleteFirmwarePackage,
  getFirmwareManifest,
  getFirmwarePackage,
  getFirmwarePackageByDigest,
  insertFirmwareManifest,
  insertFirmwarePackage,
  listDeviceCompliance,
  listFirmwareManifests,
  listFirmwarePackages,
  lockFirmwareManifest,
  makeDefaultFirmwareManifest,
  manifestsUsingPackage,
  updateFirmwareManifest,
  type Db,
  type DbOrTx,
} from '@fleet/db';
import { NodeType, nvosBuildIdOf, packageFormats, type ManifestStep } from '@fleet/domain';
import { ApiError, invalid, notFound } from '../errors.js';
import { blobDigestPattern, type BlobStore } from '../firmware/blob-store.js';
import { parseByteRange } from '../firmware/byte-range.js';
import { HttpStatusError } from '../firmware/http-status-error.js';
import { checkManifestSteps } from '../firmware/manifest-checks.js';
import {
  checkDeclaredSize,
  receiveNvosImage,
  receivePackage,
  type ReceivedPackage,
} from '../firmware/package-upload.js';
import { checkIfMatch, etag, isNotModified } from '../firmware/preconditions.js';
import { complianceView, manifestView, packageView } from '../firmware/views.js';
import { auditAccepted } from '../plugins/audit.js';
import { decodeCursor, encodeCursor, limitSchema, repeated } from '../pagination.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { siteId } from '../validation.js';
import { idempotentCreate } from '../services/idempotent-create.js';

export interface FirmwareDeps {
  blobs: BlobStore;
  /** Largest package an upload may carry (hub config firmware.maxPackageBytes). */
  maxPackageBytes: number;
}

const uuid = z.string().uuid('must be a UUID');
const IdParam = z.object({ id: uuid }).strict();
const digest = z.string().regex(blobDigestPattern, 'must be a sha256 digest in lower-case hex');
const UNIQUE_VIOLATION = '23505';

const UploadQuery = z
  .object({
    file_name: z
      .string()
      .max(255)
      .regex(/^[A-Za-z0-9._-]+$/, 'must be 1 to 255 letters, digits, ".", "_" or "-"')
      .refine((n) => !/^\.+$/.test(n), 'must not be only dots'),
    /** pldm: a DSP0267 package, parsed; nvos: an NVOS switch image, whose file name names its build. */
    format: z.enum(packageFormats).default('pldm'),
  })
  .strict();

const PackageQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    digest: repeated(digest),
    file_name: repeated(z.string().min(1)),
    package_version: repeated(z.string().min(1)),
  })
  .strict();

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

const toSteps = (steps: z.infer<typeof ManifestFields>['steps']): ManifestStep[] =>
  steps.map((s) => ({ name: s.name, packageId: s.package_id, targets: s.targets, components: s.components }));

const complianceFilters = (q: z.infer<typeof ComplianceFilters>) => ({
  ...(q.site_id ? { siteId: q.site_id } : {}),
  ...(q.rack_id ? { rackId: q.rack_id } : {}),
  ...(q.hardware_type ? { nodeType: q.hardware_type } : {}),
});

/** Firmware catalog (packages and their blobs), manifests, and the compliance of every device. */
export function firmwareRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, deps: FirmwareDeps): void {
  packageRoutes(app, doc, db, deps);
  manifestRoutes(app, doc, db);
  complianceRoutes(app, doc, db);
}

function packageRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, deps: FirmwareDeps): void {
  app.register(async (uploads) => {
    // Package bytes reach the handler as the request stream, unbuffered; the global bodyLimit
    // does not apply to them, firmware.maxPackageBytes does.
    uploads.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
    defineRoute(
      uploads,
      doc,
      {
        method: 'POST',
        url: '/v1/firmware/packages',
        tag: 'firmware',
        summary:
          'Upload a PLDM firmware package, or with format=nvos an NVOS switch image whose file name ' +
          'carries exactly one X.Y.Z build id (raw body, application/octet-stream): streamed, checked and ' +
          'stored by sha256. 201 new; 200 with the existing package when the same bytes are already stored.',
        role: 'operator',
        query: UploadQuery,
        rawBody: 'application/octet-stream',
        success: [201, 'The package'],
        alsoSucceeds: [[200, 'The package already stored with the same bytes']],
        errors: [400, 413],
      },
      async ({ request, reply, query }) => {
        const received = await receiveUpload(
          request,
          reply,
          deps,
          query.format === 'nvos' ? nvosBuildOf(query.file_name) : undefined,
        );
        const { pkg, created } = await db.transaction(async (tx) => {
          const inserted = await insertFirmwarePackage(tx, {
            digest: received.digest,
            sizeBytes: received.size,
            fileName: query.file_name,
            format: query.format,
            packageVersion: received.packageVersion,
            metadata: received.metadata,
            uploadedBy: request.actor!.name,
          });
          const row = inserted ?? (await getFirmwarePackageByDigest(tx, received.digest))!;
          await auditAccepted(tx, request, inserted ? 201 : 200, {
            action: 'firmware.package.upload',
            target: `firmware_package/${row.id}`,
            details: {
              digest: row.digest,
              size_bytes: row.sizeBytes,
              file_name: query.file_name,
              format: query.format,
              already_stored: !inserted,
            },
          });
          return { pkg: row, created: inserted !== undefined };
        });
        return reply
          .status(created ? 201 : 200)
          .header('location', `/v1/firmware/packages/${pkg.id}`)
          .header('etag', etag(pkg.digest))
          .send(packageView(pkg));
      },
    );
  });

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware/packages',
      tag: 'firmware',
      summary: 'List firmware packages, newest first',
      role: 'viewer',
      query: PackageQuery,
      success: [200, '{items, next_cursor}'],
      errors: [400],
    },
    async ({ query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.string().datetime(), uuid]));
      const rows = await listFirmwarePackages(db, {
        limit: q.limit + 1,
        ...(after ? { after: { createdAt: new Date(after[0]), id: after[1] } } : {}),
        ...(q.digest ? { digest: q.digest } : {}),
        ...(q.file_name ? { fileName: q.file_name } : {}),
        ...(q.package_version ? { packageVersion: q.package_version } : {}),
      });
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return {
        items: page.map(packageView),
        next_cursor: rows.length > q.limit && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
      };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware/packages/:id',
      tag: 'firmware',
      summary: 'One firmware package with its parsed header (ETag: its digest)',
      role: 'viewer',
      params: IdParam,
      success: [200, 'The package'],
      alsoSucceeds: [[304, 'Not modified (If-None-Match)']],
      errors: [400, 404],
    },
    async ({ request, reply, params }) => {
      const pkg = await getFirmwarePackage(db, params.id);
      if (!pkg) throw notFound('firmware package', params.id);
      const tag = etag(pkg.digest);
      if (isNotModified(request, tag)) return reply.status(304).header('etag', tag).send();
      return reply.header('etag', tag).send(packageView(pkg));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'DELETE',
      url: '/v1/firmware/packages/:id',
      tag: 'firmware',
      summary: 'Delete a package and its bytes; refused (409) while a manifest uses it',
      role: 'admin',
      params: IdParam,
      success: [204, 'Deleted'],
      errors: [400, 404, 409, 412],
    },
    async ({ request, reply, params }) => {
      const pkg = await db.transaction(async (tx) => {
        // Deleting first takes the row lock that manifest writes wait on, so the usage check below sees them all.
        const row = await deleteFirmwarePackage(tx, params.id);
        if (!row) throw notFound('firmware package', params.id);
        checkIfMatch(request, etag(row.digest));
        const users = await manifestsUsingPackage(tx, row.id);
        if (users.length)
          throw new ApiError(
            'FAILED_PRECONDITION',
            `package ${row.fileName} is used by manifest ${users.join(', ')}; change or delete those manifests first`,
          );
        await auditAccepted(tx, request, 204, {
          action: 'firmware.package.delete',
          target: `firmware_package/${row.id}`,
          details: { digest: row.digest, file_name: row.fileName },
        });
        return row;
      });
      // The catalog no longer names the blob; failing to remove it leaves an orphan, not an error for the client.
      await deps.blobs
        .delete(pkg.digest)
        .catch((err: unknown) =>
          request.log.warn({ err, digest: pkg.digest }, 'could not delete the blob of a deleted package'),
        );
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/firmware/blobs/:digest',
      tag: 'firmware',
      summary:
        "A package's bytes by sha256, for satellites: ETag is the digest; Range (bytes=N-, N-M, -N) " +
        'answers 206, a range past the end 416',
      role: 'viewer',
      params: z.object({ digest }).strict(),
      success: [200, 'The bytes'],
      alsoSucceeds: [[206, 'The bytes of the range']],
      errors: [400, 404, 416],
    },
    async ({ request, reply, params }) => {
      const info = await deps.blobs.stat(params.digest);
      if (!info) throw notFound('blob', params.digest);
      const range = parseByteRange(request.headers.range, info.size);
      if (range === 'unsatisfiable') {
        void reply.header('content-range', `bytes */${info.size}`);
        throw new HttpStatusError(
          416,
          'INVALID_ARGUMENT',
          `range ${request.headers.range} lies outside the ${info.size}-byte blob`,
          [{ field: 'header.Range', issue: `the blob has ${info.size} bytes` }],
        );
      }
      void reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', range ? range.end - range.start + 1 : info.size)
        .header('etag', etag(params.digest))
        .header('accept-ranges', 'bytes')
        // Content-addressed: the bytes behind a digest never change.
        .header('cache-control', 'private, max-age=31536000, immutable');
      if (range) void reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${info.size}`);
      // HEAD: headers only (Fastify would read a stream to the end to discard it).
      if (request.method === 'HEAD') return reply.send(Readable.from([]));
      const bytes = await deps.blobs.read(params.digest, range);
      if (!bytes) throw notFound('blob', params.digest);
      return reply.send(bytes);
    },
  );
}

/** The NVOS build an image's file name names (NVOS's own rule), checked before a byte is read. */
function nvosBuildOf(fileName: string): string {
  try {
    return nvosBuildIdOf(fileName);
  } catch (err) {
    throw invalid('query.file_name', (err as Error).message);
  }
}

/**
 * The upload's body streamed into the blob store (an NVOS image of `nvosBuild`, else a PLDM
 * package); a failed upload closes the connection rather than read the rest.
 */
async function receiveUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: FirmwareDeps,
  nvosBuild: string | undefined,
): Promise<ReceivedPackage> {
  if (!(request.body instanceof Readable))
    throw invalid('body', 'send the package as the request body, with Content-Type: application/octet-stream');
  try {
    checkDeclaredSize(request.headers['content-length'], deps.maxPackageBytes);
    return nvosBuild
      ? await receiveNvosImage(request.body, deps.blobs, deps.maxPackageBytes, nvosBuild)
      : await receivePackage(request.body, deps.blobs, deps.maxPackageBytes);
  } catch (err) {
    if (!request.raw.complete) void reply.header('connection', 'close');
    throw err;
  }
}

function manifestRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
  const nameTaken = (name: string) => (err: { cause?: { code?: string } }) => {
    if (err.cause?.code === UNIQUE_VIOLATION)
      throw new ApiError('ALREADY_EXISTS', `a manifest named ${name} exists already`, [
        { field: 'body.name', issue: 'taken' },
      ]);
    throw err;
  };
  const lockedManifest = async (tx: DbOrTx, request: FastifyRequest, id: string) => {
    const m = await lockFirmwareManifest(tx, id);
    if (!m) throw notFound('firmware manifest', id);
    checkIfMatch(request, etag(m.revision));
    return m;
  };

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/firmware/manifests',
      tag: 'firmware',
      summary:
        'Create a firmware manifest: for one hardware type, the packages to push in order and the ' +
        'component versions they install; default=true makes it the default for its type. Idempotency-Key ' +
        'honoured',
      role: 'operator',
      body: NewManifest,
      success: [201, 'The manifest'],
      errors: [400, 409],
    },
    ({ request, reply, body }) =>
      idempotentCreate(db, request, reply, async (tx) => {
        const steps = toSteps(body.steps);
        await checkManifestSteps(tx, steps);
        const row = await insertFirmwareManifest(tx, {
          name: body.name,
          hardwareType: body.hardware_type,
          steps,
          isDefault: body.default,
          createdBy: request.actor!.name,
        });
        await auditAccepted(tx, request, 201, {
          action: 'firmware.manifest.create',
          target: `firmware_manifest/${row.id}`,
          details: { name: row.name, hardware_type: row.hardwareType, default: row.isDefault },
        });
        return {
          status: 201,
          headers: { location: `/v1/firmware/manifests/${row.id}`, etag: etag(row.revision) },
          body: manifestView(row),
        };
      }).catch(nameTaken(body.name)),
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
      query: ManifestQuery,
      success: [200, '{items, next_cursor}'],
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
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return {
        items: page.map(manifestView),
        next_cursor: rows.length > q.limit && last ? encodeCursor([last.name]) : null,
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
      params: IdParam,
      success: [200, 'The manifest'],
      alsoSucceeds: [[304, 'Not modified (If-None-Match)']],
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
      success: [200, 'The manifest, next revision'],
      errors: [400, 404, 409, 412],
    },
    async ({ request, reply, params, body }) => {
      const m = await db
        .transaction(async (tx) => {
          const current = await lockedManifest(tx, request, params.id);
          if (current.isDefault && current.hardwareType !== body.hardware_type) {
            throw new ApiError(
              'FAILED_PRECONDITION',
              `manifest ${current.name} is the default for ${current.hardwareType}; make another manifest ` +
                `the default before moving it to ${body.hardware_type}`,
            );
          }
          const steps = toSteps(body.steps);
          await checkManifestSteps(tx, steps);
          const row = await updateFirmwareManifest(tx, current.id, {
            name: body.name,
            hardwareType: body.hardware_type,
            steps,
          });
          await auditAccepted(tx, request, 200, {
            action: 'firmware.manifest.update',
            target: `firmware_manifest/${row.id}`,
            details: { revision: row.revision },
          });
          return row;
        })
        .catch(nameTaken(body.name));
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
      success: [200, 'The manifest'],
      errors: [400, 404, 412],
    },
    async ({ request, reply, params }) => {
      const m = await db.transaction(async (tx) => {
        const row = await makeDefaultFirmwareManifest(tx, await lockedManifest(tx, request, params.id));
        await auditAccepted(tx, request, 200, {
          action: 'firmware.manifest.default',
          target: `firmware_manifest/${row.id}`,
          details: { hardware_type: row.hardwareType },
        });
        return row;
      });
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
      success: [204, 'Deleted'],
      errors: [400, 404, 412],
    },
    async ({ request, reply, params }) => {
      await db.transaction(async (tx) => {
        const m = await lockedManifest(tx, request, params.id);
        await deleteFirmwareManifest(tx, m.id);
        await auditAccepted(tx, request, 204, {
          action: 'firmware.manifest.delete',
          target: `firmware_manifest/${m.id}`,
          details: { name: m.name, default: m.isDefault },
        });
      });
      return reply.status(204).send();
    },
  );
}

function complianceRoutes(app: FastifyInstance, doc: ApiDoc, db: Db): void {
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
      success: [200, '{items, next_cursor}'],
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
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return {
        items: page.map(complianceView),
        next_cursor: rows.length > q.limit && last ? encodeCursor([last.name, last.deviceId]) : null,
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
      success: [200, '{total, by_status}'],
      errors: [400],
    },
    async ({ query }) => {
      const byStatus = await complianceSummary(db, complianceFilters(query));
      return { total: Object.values(byStatus).reduce((a, b) => a + b, 0), by_status: byStatus };
    },
  );
}
