import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { getFirmwarePackage, listFirmwarePackages, siteJobUsesBlob, type Db } from '@fleet/db';
import { nvosBuildIdOf, packageFormats } from '@fleet/domain';
import { ApiError, invalid, notFound } from '../errors.js';
import { blobDigestPattern, type BlobStore } from '../firmware/blob-store.js';
import { parseByteRange } from '../firmware/byte-range.js';
import { HttpStatusError } from '../firmware/http-status-error.js';
import {
  checkDeclaredSize,
  receiveNvosImage,
  receivePackage,
  type ReceivedPackage,
} from '../firmware/package-upload.js';
import { etag, isNotModified } from '../firmware/preconditions.js';
import { PackagePage, PackageView, packageView } from '../firmware/views.js';
import { decodeCursor, cursorPage, limitSchema, repeated } from '../pagination.js';
import { IdParam, uuid } from '../params.js';
import { defineRoute, type ApiDoc, type ResponseHeader } from '../route.js';
import { callerOf } from '../services/caller.js';
import { catalogPackage, uncatalogPackage } from '../services/firmware-packages.service.js';

export interface FirmwareDeps {
  blobs: BlobStore;
  /** Largest package an upload may carry (hub config firmware.maxPackageBytes). */
  maxPackageBytes: number;
}

const digest = z.string().regex(blobDigestPattern, 'must be a sha256 digest in lower-case hex');
const blobHeaders: ResponseHeader[] = ['ETag', 'Accept-Ranges', 'Cache-Control'];

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

/** The firmware catalog: packages (uploaded, listed, deleted) and their bytes by digest, for satellites. */
export function firmwarePackageRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, deps: FirmwareDeps): void {
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
        success: { status: 201, description: 'The package', body: PackageView, headers: ['Location', 'ETag'] },
        alsoSucceeds: [
          {
            status: 200,
            description: 'The package already stored with the same bytes',
            body: PackageView,
            headers: ['Location', 'ETag'],
          },
        ],
        errors: [400, 413],
      },
      async ({ request, reply, query }) => {
        const received = await receiveUpload(
          request,
          reply,
          deps,
          query.format === 'nvos' ? nvosBuildOf(query.file_name) : undefined,
        );
        const { pkg, created } = await catalogPackage(db, callerOf(request), {
          received,
          fileName: query.file_name,
          format: query.format,
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
      sites: 'fleet',
      query: PackageQuery,
      success: { status: 200, description: 'Packages', body: PackagePage },
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
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.createdAt.toISOString(), last.id]);
      return {
        items: page.map(packageView),
        next_cursor: nextCursor,
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
      sites: 'fleet',
      params: IdParam,
      success: { status: 200, description: 'The package', body: PackageView, headers: ['ETag'] },
      alsoSucceeds: [{ status: 304, description: 'Not modified (If-None-Match)', headers: ['ETag'] }],
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
      success: { status: 204, description: 'Deleted' },
      errors: [400, 404, 409, 412],
    },
    async ({ request, reply, params }) => {
      const pkg = await uncatalogPackage(db, callerOf(request), {
        id: params.id,
        ifMatch: request.headers['if-match'],
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
      role: ['viewer', 'satellite'],
      sites: 'scoped',
      params: z.object({ digest }).strict(),
      success: { status: 200, description: 'The bytes', body: 'bytes', headers: blobHeaders },
      alsoSucceeds: [
        {
          status: 206,
          description: 'The bytes of the range',
          body: 'bytes',
          headers: [...blobHeaders, 'Content-Range'],
        },
      ],
      errors: [400, 404, 416],
    },
    async ({ request, reply, params }) => {
      const actor = request.actor!;
      // A satellite fetches only what its own site's open jobs push (docs/security.md "Per-site roles").
      if (actor.role === 'satellite' && !(await siteJobUsesBlob(db, actor.sites![0]!, params.digest)))
        throw new ApiError(
          'PERMISSION_DENIED',
          `satellite token ${actor.name} of site ${actor.sites![0]} may fetch only the packages its site's open ` +
            `jobs push; none pushes blob ${params.digest}`,
          [{ field: 'path.digest', issue: "not used by an open job of the token's site" }],
        );
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
    const limits = checkDeclaredSize(request.headers['content-length'], deps.maxPackageBytes);
    const context = { requestId: String(request.id) };
    return nvosBuild
      ? await receiveNvosImage(request.body, deps.blobs, limits, nvosBuild, context)
      : await receivePackage(request.body, deps.blobs, limits, context);
  } catch (err) {
    if (!request.raw.complete) void reply.header('connection', 'close');
    throw err;
  }
}
