import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { request, type Dispatcher } from 'undici';
import { PARALLEL_FILE_BYTES, type DirectOpener, type DirectWriteFallback } from '@fleet/fwpkg';
import { ArtifactFetchError } from './artifact-errors.js';
import { partialWriter } from './partial-writer.js';

export interface BlobDownload {
  /** `<hub>/v1/firmware/blobs/<digest>`. */
  url: string;
  token: string;
  digest: string;
  size: number;
  /** Where the bytes accumulate; what is there already is resumed, after re-hashing it. */
  partialPath: string;
  /** Where the verified blob ends up. */
  finalPath: string;
  dispatcher: Dispatcher;
  signal?: AbortSignal | undefined;
  /** Bytes of the blob on disk so far (resumed + received), as they grow. */
  onProgress?: ((bytes: number) => void) | undefined;
  /** From this size on, the blob is hashed on a worker thread (PARALLEL_FILE_BYTES unless set). */
  parallelFromBytes?: number | undefined;
  /** How worker-thread downloads write whole slots around the page cache (SlotFile); tests put a failing disk there. */
  openDirect?: DirectOpener | undefined;
  /** The partial file went back to the page cache (SlotFile's fallbacks; worker-thread downloads only). */
  onDirectFallback?: ((fallback: DirectWriteFallback) => void) | undefined;
}

/** The size of what an earlier attempt left in the partial file: the prefix to resume after (0: none usable). */
async function resumePoint(d: BlobDownload): Promise<number> {
  const existing = await stat(d.partialPath).catch(() => undefined);
  if (!existing) return 0;
  if (existing.size > d.size) {
    await rm(d.partialPath, { force: true });
    return 0;
  }
  return existing.size;
}

function failureFor(d: BlobDownload, status: number): ArtifactFetchError {
  if (status === 416)
    return new ArtifactFetchError(
      'size_mismatch',
      d.digest,
      d.url,
      `the hub's blob is shorter than the partial download; the catalog says ${d.size} bytes`,
      { status },
    );
  if (status === 404)
    return new ArtifactFetchError('not_found', d.digest, d.url, 'the hub has no blob with this digest', { status });
  if (status === 401 || status === 403)
    return new ArtifactFetchError(
      'unauthorized',
      d.digest,
      d.url,
      `the hub refused the satellite's token (HTTP ${status})`,
      { status },
    );
  return new ArtifactFetchError('unavailable', d.digest, d.url, `the hub answered HTTP ${status}`, { status });
}

/** The byte the response's body starts at: `have` for a 206 that resumes there, 0 for a full 200. */
function bodyOffset(
  d: BlobDownload,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  have: number,
): number {
  if (status === 200) {
    const length = Number(headers['content-length']);
    if (headers['content-length'] !== undefined && length !== d.size)
      throw new ArtifactFetchError(
        'size_mismatch',
        d.digest,
        d.url,
        `the hub's blob has ${length} bytes, the catalog says ${d.size}`,
      );
    return 0;
  }
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(headers['content-range']));
  if (!range || Number(range[1]) !== have)
    throw new ArtifactFetchError(
      'unavailable',
      d.digest,
      d.url,
      `unexpected Content-Range ${String(headers['content-range'])} for a resume at byte ${have}`,
    );
  if (Number(range[3]) !== d.size)
    throw new ArtifactFetchError(
      'size_mismatch',
      d.digest,
      d.url,
      `the hub's blob has ${range[3]} bytes, the catalog says ${d.size}`,
    );
  return have;
}

/**
 * Fetches one blob from the hub into `finalPath`, resuming a partial file with a Range request,
 * and renames it into place only once its sha256 matches the digest. A transfer that breaks off
 * keeps the partial file for the next attempt; a digest mismatch deletes it. Returns the bytes
 * received over the network. Memory stays at a few chunks.
 */
export async function downloadBlob(d: BlobDownload): Promise<number> {
  const parallel = d.size >= (d.parallelFromBytes ?? PARALLEL_FILE_BYTES);
  const writerAt = (offset: number) => partialWriter(d, offset, parallel);
  const have = await resumePoint(d);
  let writer = writerAt(have);
  let received = 0;
  if (have < d.size) {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(d.url, {
        dispatcher: d.dispatcher,
        signal: d.signal,
        headers: { authorization: `Bearer ${d.token}`, ...(have > 0 ? { range: `bytes=${have}-` } : {}) },
      });
    } catch (err) {
      d.signal?.throwIfAborted();
      throw new ArtifactFetchError(
        'unavailable',
        d.digest,
        d.url,
        `the hub could not be reached: ${(err as Error).message}`,
        { cause: err },
      );
    }
    if (res.statusCode !== 200 && res.statusCode !== 206) {
      await res.body.dump();
      // A partial the hub cannot continue is no prefix of its blob.
      if (res.statusCode === 416) await rm(d.partialPath, { force: true });
      throw failureFor(d, res.statusCode);
    }
    const offset = bodyOffset(d, res.statusCode, res.headers, have);
    if (offset !== have) writer = writerAt(offset); // the hub sent the whole blob: start over
    try {
      await writer.write(res.body);
    } catch (err) {
      d.signal?.throwIfAborted();
      if (err instanceof ArtifactFetchError) throw err;
      throw new ArtifactFetchError(
        'unavailable',
        d.digest,
        d.url,
        `the transfer broke off after ${writer.onDisk} of ${d.size} bytes: ${(err as Error).message}`,
        { cause: err },
      );
    }
    received = writer.onDisk - offset;
  } else await writer.write([]);
  if (writer.onDisk !== d.size)
    throw new ArtifactFetchError(
      'unavailable',
      d.digest,
      d.url,
      `the transfer ended after ${writer.onDisk} of ${d.size} bytes`,
    );
  const actual = await writer.digest();
  if (actual !== d.digest) {
    await rm(d.partialPath, { force: true });
    throw new ArtifactFetchError(
      'digest_mismatch',
      d.digest,
      d.url,
      `the bytes received hash to ${actual}; the partial download was deleted`,
    );
  }
  await fsync(d.partialPath);
  await rename(d.partialPath, d.finalPath);
  await fsync(dirname(d.finalPath));
  return received;
}

/** Flushes a file, or a directory's entries (for a rename), to disk. */
async function fsync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
