import { createHash } from 'node:crypto';
import { Transform, Writable, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FirmwarePackageMetadata } from '@fleet/domain';
import {
  FwpkgError,
  FwpkgInspector,
  PARALLEL_FILE_BYTES,
  ParallelFwpkgInspector,
  ParallelSha256,
  type FwpkgInspection,
  type SlotForward,
} from '@fleet/fwpkg';
import { ApiError } from '../errors.js';
import type { BlobStore, BlobWriteContext } from './blob-store.js';
import { HttpStatusError } from './http-status-error.js';
import { packageMetadata } from './package-metadata.js';

export interface ReceivedPackage {
  digest: string;
  size: number;
  packageVersion: string;
  metadata: FirmwarePackageMetadata;
}

const tooLarge = (maxBytes: number) =>
  new HttpStatusError(
    413,
    'INVALID_ARGUMENT',
    `the package is larger than this hub accepts (firmware.maxPackageBytes = ${maxBytes} bytes)`,
    [{ field: 'body', issue: `more than ${maxBytes} bytes` }],
  );

/** A sink that examines the bytes on their way into the blob store; `result` settles at the end. */
type Inspector<T extends { sha256: string; size: number }> = Writable & { readonly result: Promise<T> };

/** An NVOS image is opaque bytes: the catalog needs only their sha256 and size. */
class DigestInspector extends Writable {
  readonly result: Promise<{ sha256: string; size: number }>;
  private readonly hash = createHash('sha256');
  private size = 0;
  private settle!: (v: { sha256: string; size: number }) => void;

  constructor() {
    super();
    this.result = new Promise((resolve) => (this.settle = resolve));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    done();
  }

  override _final(done: () => void): void {
    this.settle({ sha256: this.hash.digest('hex'), size: this.size });
    done();
  }
}

/** Passes the bytes on unchanged while counting them against the size limit. */
class SizeLimit extends Transform {
  private bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(tooLarge(this.maxBytes));
    done(null, chunk);
  }
}

/**
 * Passes the bytes on unchanged while feeding the inspector, which hashes (and for PLDM parses)
 * them. A write waits for the inspector, so memory stays at a few chunks whatever the package size.
 */
class InspectingTap<T extends { sha256: string; size: number }> extends Transform {
  constructor(private readonly inspector: Inspector<T>) {
    super();
    inspector.on('error', (err) => this.destroy(err));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.inspector.write(chunk, (err) => done(err, chunk));
  }

  override _flush(done: TransformCallback): void {
    this.inspector.end();
    this.inspector.result.then(() => done(), done);
  }
}

/**
 * How a kind of upload is inspected: in this thread, each chunk passed on to the blob store as it
 * came; or, for a large one, hashed on worker threads from 4 MiB slots that are also what the blob
 * store writes, so the thread serving HTTP neither hashes nor writes in small pieces.
 */
interface InspectorKind<T extends { sha256: string; size: number }> {
  inThread(): Inspector<T>;
  parallel(forward: SlotForward): Inspector<T>;
}

const pldmPackage: InspectorKind<FwpkgInspection> = {
  inThread: () => new FwpkgInspector(),
  parallel: (forward) => new ParallelFwpkgInspector(forward),
};

const opaqueImage: InspectorKind<{ sha256: string; size: number }> = {
  inThread: () => new DigestInspector(),
  parallel: (forward) => new ParallelSha256(forward),
};

/** The client-facing reason an upload failed; anything unexpected stays as it is (a 500). */
function rejection(err: unknown, body: Readable): unknown {
  if (err instanceof FwpkgError) {
    return new ApiError('INVALID_ARGUMENT', `not a valid PLDM firmware package (DSP0267): ${err.message}`, [
      { field: `body.${err.field}`, issue: err.message },
    ]);
  }
  if (body.readableAborted)
    return new ApiError('INVALID_ARGUMENT', 'the upload stopped before the end of the package (client disconnected)');
  return err;
}

/**
 * Streams an upload into the blob store while inspecting it, and commits it under its sha256
 * only once the inspector accepted the whole of it. On any failure (corrupt package, size
 * limit, client gone) the partial blob is aborted: nothing half-stored remains. The body is
 * never destroyed here, so the caller can still answer the client.
 */
async function receive<T extends { sha256: string; size: number }>(
  body: Readable,
  blobs: BlobStore,
  limits: UploadLimits,
  kind: InspectorKind<T>,
  context: BlobWriteContext,
): Promise<T> {
  const upload = await blobs.beginWrite(context);
  const parallel = takeParallelSlot(limits.declaredBytes);
  let inspector: Inspector<T> | undefined;
  try {
    const source = body.iterator({ destroyOnReturn: false });
    if (parallel) {
      // A failed slot write (a full disk) fails the upload at once, not at the next slot the client sends.
      const slots = kind.parallel((bytes, at) =>
        upload.writeSlot(bytes, at).catch((err: Error) => {
          slots.destroy(err);
          throw err;
        }),
      );
      inspector = slots;
      await pipeline(source, new SizeLimit(limits.maxBytes), inspector);
    } else {
      inspector = kind.inThread();
      await pipeline(source, new SizeLimit(limits.maxBytes), new InspectingTap(inspector), upload.stream);
    }
    const inspection = await inspector.result;
    await upload.commit(inspection.sha256);
    return inspection;
  } catch (err) {
    inspector?.destroy();
    await upload.abort();
    throw rejection(err, body);
  } finally {
    if (parallel) parallelUploads--;
  }
}

/**
 * Uploads hashing on worker threads at once: each holds two threads and 16 MiB of shared memory, and a client only
 * has to declare a large Content-Length to get them, so past this many the rest hash in the request's thread.
 */
const MAX_PARALLEL_UPLOADS = 4;
let parallelUploads = 0;

function takeParallelSlot(declaredBytes: number | undefined): boolean {
  if (declaredBytes === undefined || declaredBytes < PARALLEL_FILE_BYTES) return false;
  if (parallelUploads >= MAX_PARALLEL_UPLOADS) return false;
  parallelUploads++;
  return true;
}

/** The hub's size limit, and the size the client declared (Content-Length), when it did. */
export interface UploadLimits {
  maxBytes: number;
  declaredBytes?: number | undefined;
}

/** A PLDM package (DSP0267), parsed as it streams: its version is the header's. */
export async function receivePackage(
  body: Readable,
  blobs: BlobStore,
  limits: UploadLimits,
  context: BlobWriteContext = {},
): Promise<ReceivedPackage> {
  const inspection = await receive(body, blobs, limits, pldmPackage, context);
  return {
    digest: inspection.sha256,
    size: inspection.size,
    packageVersion: inspection.header.packageVersion,
    metadata: packageMetadata(inspection),
  };
}

/** An NVOS image: stored as-is; its version is the build id its file name carries. */
export async function receiveNvosImage(
  body: Readable,
  blobs: BlobStore,
  limits: UploadLimits,
  buildId: string,
  context: BlobWriteContext = {},
): Promise<ReceivedPackage> {
  const { sha256, size } = await receive(body, blobs, limits, opaqueImage, context);
  return { digest: sha256, size, packageVersion: buildId, metadata: { format: 'nvos', buildId } };
}

/** 413 before reading a byte when the client declares a body over the limit; else the upload's limits. */
export function checkDeclaredSize(contentLength: string | undefined, maxBytes: number): UploadLimits {
  const declaredBytes = contentLength === undefined ? undefined : Number(contentLength);
  if (declaredBytes !== undefined && declaredBytes > maxBytes) throw tooLarge(maxBytes);
  return { maxBytes, declaredBytes: Number.isSafeInteger(declaredBytes) ? declaredBytes : undefined };
}
