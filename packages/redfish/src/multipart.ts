import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { BodySource } from './transport.js';

export interface UpdateParameters {
  /** Component URIs to update; empty means everything the package carries. */
  Targets: string[];
  /** Required to install an older image than the one running (a downgrade). */
  ForceUpdate: boolean;
}

export interface FirmwareFile {
  path: string;
  /** Size in bytes as stat()ed before the upload; the body's Content-Length is built from it. */
  size: number;
  /** File name announced to the BMC. */
  name: string;
}

/** Bytes per file read and per pooled buffer: well above a socket's 16–64 KiB highWaterMark (see frame). */
const chunkBytes = 256 * 1024;
/** Buffers per body: the next chunk being read, the chunk the socket is sending, and one already released (margin). */
const poolSize = 3;

/**
 * The Redfish multipart push body (`UpdateParameters` JSON part, `UpdateFile` part),
 * streamed from disk. The framing is fixed text around the file, which gives an exact
 * Content-Length up front: BMCs reject chunked uploads, and the length lets them refuse
 * oversize images early.
 *
 * Memory is bounded by design, whatever the image size: one body holds at most
 * poolSize × chunkBytes (768 KiB) of file data plus the framing, in buffers allocated once per
 * body and reused for every read (see frame).
 */
export function multipartFirmwareBody(params: UpdateParameters, file: FirmwareFile): BodySource {
  const boundary = `FleetRedfish${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\n` +
      'Content-Disposition: form-data; name="UpdateParameters"\r\n' +
      'Content-Type: application/json\r\n\r\n' +
      `${JSON.stringify(params)}\r\n` +
      `--${boundary}\r\n` +
      `Content-Disposition: form-data; name="UpdateFile"; filename="${quoted(file.name)}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + file.size + tail.length,
    open: () => frame(head, file, tail),
  };
}

/**
 * The body as an async iterable, read with positional reads into a fixed pool of buffers.
 * A fresh buffer per read would be garbage within a millisecond, but V8 frees such external
 * memory only when a GC runs, and it schedules one only after ~64 MiB of it accumulates: that
 * lag, not the data in flight, made most of the upload's RSS growth.
 *
 * Reuse is safe because of how the consumer pulls. undici's iterable writer asks for the next
 * chunk only after socket.write() of the previous one, and when that returned false, after
 * 'drain', i.e. once the socket has released every chunk written so far. Every file chunk but
 * the last is a full chunkBytes, over the socket's highWaterMark, so write() returns false for
 * each. Chunk k lives in buffer k % poolSize, and the read that overwrites it (for chunk k + 3)
 * starts when the consumer asks for chunk k + 2, after chunks k and k + 1 have drained. The
 * iterable must therefore go to such a consumer and to nothing that keeps chunks (it is never
 * handed out beyond the transport).
 */
async function* frame(head: Buffer, file: FirmwareFile, tail: Buffer): AsyncGenerator<Buffer> {
  yield head;
  if (file.size > 0) {
    const fh = await open(file.path, 'r');
    let pending: Promise<Buffer> | undefined;
    try {
      const pool = Array.from({ length: poolSize }, () => Buffer.allocUnsafeSlow(Math.min(chunkBytes, file.size)));
      // Fills `buffer` (or up to the stat()ed size, so a file that grows cannot overrun Content-Length).
      const fill = async (buffer: Buffer, position: number): Promise<Buffer> => {
        const want = Math.min(buffer.length, file.size - position);
        let got = 0;
        while (got < want) {
          const { bytesRead } = await fh.read(buffer, got, want - got, position + got);
          if (bytesRead === 0)
            throw new Error(`${file.path} shrank during upload (${position + got} of ${file.size} bytes read)`);
          got += bytesRead;
        }
        return buffer.subarray(0, want);
      };
      const readAhead = (buffer: Buffer, position: number) => {
        const read = fill(buffer, position);
        // Awaited below; this only keeps a failed read from counting as unhandled if the upload stops first.
        read.catch(() => undefined);
        return read;
      };
      let position = 0;
      let next = readAhead(pool[0]!, 0);
      pending = next;
      for (let k = 1; ; k++) {
        const chunk = await next;
        pending = undefined;
        position += chunk.length;
        const last = position === file.size;
        // The next read overlaps this chunk's send; its buffer last held chunk k - 3 (see above).
        if (!last) pending = next = readAhead(pool[k % poolSize]!, position);
        yield chunk;
        if (last) break;
      }
    } finally {
      // A read still in flight (the upload stopped early) must finish before the handle closes.
      await pending?.catch(() => undefined);
      await fh.close();
    }
  }
  yield tail;
}

/** A filename that cannot break out of its quoted header parameter. */
function quoted(name: string): string {
  return name.replace(/[\r\n"\\]/g, '_');
}
