import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FirmwarePackageMetadata } from '@fleet/domain';
import { FwpkgError, FwpkgInspector } from '@fleet/fwpkg';
import { ApiError } from '../errors.js';
import type { BlobStore } from './blob-store.js';
import { HttpStatusError } from './http-status-error.js';
import { packageMetadata } from './package-metadata.js';

export interface ReceivedPackage {
  digest: string;
  size: number;
  packageVersion: string;
  metadata: FirmwarePackageMetadata;
}

const tooLarge = (maxBytes: number) =>
  new HttpStatusError(413, 'INVALID_ARGUMENT', `the package is larger than this hub accepts (firmware.maxPackageBytes = ${maxBytes} bytes)`, [
    { field: 'body', issue: `more than ${maxBytes} bytes` },
  ]);

/**
 * Passes the bytes on unchanged while counting them against the size limit and feeding the
 * inspector, which hashes and parses them. A write waits for the inspector, so memory stays
 * at a few chunks whatever the package size.
 */
class InspectingTap extends Transform {
  private bytes = 0;

  constructor(
    private readonly inspector: FwpkgInspector,
    private readonly maxBytes: number,
  ) {
    super();
    inspector.on('error', (err) => this.destroy(err));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(tooLarge(this.maxBytes));
    this.inspector.write(chunk, (err) => done(err, chunk));
  }

  override _flush(done: TransformCallback): void {
    this.inspector.end();
    this.inspector.result.then(() => done(), done);
  }
}

/** The client-facing reason an upload failed; anything unexpected stays as it is (a 500). */
function rejection(err: unknown, body: Readable): unknown {
  if (err instanceof FwpkgError) {
    return new ApiError('INVALID_ARGUMENT', `not a valid PLDM firmware package (DSP0267): ${err.message}`, [{ field: `body.${err.field}`, issue: err.message }]);
  }
  if (body.readableAborted) return new ApiError('INVALID_ARGUMENT', 'the upload stopped before the end of the package (client disconnected)');
  return err;
}

/**
 * Streams an uploaded package into the blob store while inspecting it, and commits it under
 * its sha256 only once it has proved to be a whole, valid package. On any failure (corrupt
 * package, size limit, client gone) the partial blob is aborted: nothing half-stored remains.
 * The body is never destroyed here, so the caller can still answer the client.
 */
export async function receivePackage(body: Readable, blobs: BlobStore, maxBytes: number): Promise<ReceivedPackage> {
  const upload = await blobs.beginWrite();
  const inspector = new FwpkgInspector();
  try {
    await pipeline(body.iterator({ destroyOnReturn: false }), new InspectingTap(inspector, maxBytes), upload.stream);
    const inspection = await inspector.result;
    await upload.commit(inspection.sha256);
    return { digest: inspection.sha256, size: inspection.size, packageVersion: inspection.header.packageVersion, metadata: packageMetadata(inspection) };
  } catch (err) {
    inspector.destroy();
    await upload.abort();
    throw rejection(err, body);
  }
}

/** 413 before reading a byte when the client declares a body over the limit. */
export function checkDeclaredSize(contentLength: string | undefined, maxBytes: number): void {
  if (contentLength !== undefined && Number(contentLength) > maxBytes) throw tooLarge(maxBytes);
}
