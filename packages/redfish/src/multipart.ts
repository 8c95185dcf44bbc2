import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
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

const chunkBytes = 256 * 1024;

/**
 * The Redfish multipart push body (`UpdateParameters` JSON part, `UpdateFile` part),
 * streamed from disk in small chunks so memory stays flat whatever the image size.
 * The framing is fixed text around the file, which gives an exact Content-Length up
 * front: BMCs reject chunked uploads, and the length lets them refuse oversize images early.
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
    open: () => Readable.from(frame(head, file, tail), { objectMode: false }),
  };
}

async function* frame(head: Buffer, file: FirmwareFile, tail: Buffer): AsyncGenerator<Buffer> {
  yield head;
  let sent = 0;
  if (file.size > 0) {
    // `end` bounds the read to the stat()ed size, so a file that grows cannot overrun Content-Length.
    for await (const chunk of createReadStream(file.path, {
      start: 0,
      end: file.size - 1,
      highWaterMark: chunkBytes,
    })) {
      sent += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
  }
  if (sent !== file.size) throw new Error(`${file.path} shrank during upload (${sent} of ${file.size} bytes read)`);
  yield tail;
}

/** A filename that cannot break out of its quoted header parameter. */
function quoted(name: string): string {
  return name.replace(/[\r\n"\\]/g, '_');
}
