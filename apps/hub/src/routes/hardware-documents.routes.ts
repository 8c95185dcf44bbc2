import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getDevice, getDeviceHardware, type Db } from '@fleet/db';
import { ApiError, invalid, notFound } from '../errors.js';
import type { BlobStore } from '../firmware/blob-store.js';
import { HttpStatusError } from '../firmware/http-status-error.js';
import { IdParam } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';

/** A Redfish inventory document is a few hundred KiB (a switch tray's is the largest); far more is not one. */
export const maxHardwareDocumentBytes = 16 * 1024 * 1024;

const DocumentParam = z
  .object({ digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 lower-case hex digits>') })
  .strict();
const StoredView = z
  .object({ digest: z.string(), bytes: z.number().int(), stored: z.enum(['new', 'existing']) })
  .meta({ id: 'HardwareDocumentStored' });

/**
 * The Redfish documents of hardware inventory reads, by digest, in the hub's content-addressed blob store (beside the
 * firmware packages): satellites store them, as they fetch packages from it; only the digest and the parsed record
 * travel through Temporal. A write can add a document, never change one: the body must hash to its digest.
 */
export function hardwareDocumentRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, blobs: BlobStore): void {
  app.register(async (uploads) => {
    uploads.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
    defineRoute(
      uploads,
      doc,
      {
        method: 'PUT',
        url: '/v1/hardware-documents/:digest',
        tag: 'lifecycle',
        summary:
          "Store the canonical Redfish document of a device's hardware inventory read under its sha256 (satellites; " +
          'raw body, at most 16 MiB). 201 stored; 200 when the same document is stored already; 400 when the body ' +
          'does not hash to the digest',
        role: ['operator', 'satellite'],
        sites: 'fleet',
        params: DocumentParam,
        rawBody: 'application/octet-stream',
        success: { status: 201, description: 'Stored', body: StoredView },
        alsoSucceeds: [{ status: 200, description: 'Stored already', body: StoredView }],
        errors: [400, 413],
      },
      async ({ request, reply, params }) => {
        if (!(request.body instanceof Readable))
          throw invalid('body', 'send the document as the request body, with Content-Type: application/octet-stream');
        const hex = params.digest.slice('sha256:'.length);
        const body = await readLimited(request.body);
        const actual = createHash('sha256').update(body).digest('hex');
        if (actual !== hex)
          throw invalid('path.digest', `the body's sha256 is ${actual}, not the digest it is stored under`);
        if (await blobs.stat(hex))
          return reply.status(200).send({ digest: params.digest, bytes: body.length, stored: 'existing' });
        const upload = await blobs.beginWrite();
        try {
          upload.stream.end(body);
          await finished(upload.stream);
          await upload.commit(hex);
        } catch (err) {
          await upload.abort();
          throw err;
        }
        return reply.status(201).send({ digest: params.digest, bytes: body.length, stored: 'new' });
      },
    );
  });

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/devices/:id/hardware/document',
      tag: 'lifecycle',
      summary:
        "The Redfish document the device's last hardware record was parsed from: every resource the read used, by " +
        'URI, as canonical JSON; 404 before a read, or when the satellite could not store it',
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      success: { status: 200, description: 'The document (application/json)', body: 'bytes' },
      errors: [404],
    },
    async ({ reply, params }) => {
      const device = await getDevice(db, params.id);
      if (!device) throw notFound('device', params.id);
      const hw = await getDeviceHardware(db, device.id);
      if (!hw) throw new ApiError('NOT_FOUND', `device ${device.name} has no hardware read yet: enrol it`);
      const bytes = await blobs.read(hw.digest.slice('sha256:'.length));
      if (!bytes) throw new ApiError('NOT_FOUND', `the document ${hw.digest} of device ${device.name} is not stored`);
      return reply
        .header('content-type', 'application/json')
        .header('etag', `"${hw.digest}"`)
        .header('cache-control', 'private, max-age=31536000, immutable')
        .send(bytes);
    },
  );
}

async function readLimited(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxHardwareDocumentBytes) {
      body.destroy();
      throw new HttpStatusError(
        413,
        'INVALID_ARGUMENT',
        `a hardware document is at most ${maxHardwareDocumentBytes} bytes`,
        [{ field: 'body', issue: 'too large' }],
      );
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
