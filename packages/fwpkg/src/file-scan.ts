import type { FileHandle } from 'node:fs/promises';
import { crc32 } from './crc32.js';
import { parseFwpkgHeader } from './header-parser.js';
import { SLOT_BYTES, SlotHashers } from './slot-hashers.js';
import type { FwpkgHeader } from './types.js';

export interface FileScan {
  header: FwpkgHeader;
  size: number;
  sha256: string;
  componentSha256: string[];
  payloadCrc: number;
}

/**
 * What the filling thread checks of a package read in slots: the header from the first slot (a header is at
 * most 65535 bytes, so the first slot holds it unless the package is shorter, in which case parsing it names the
 * field the package stops in, as for a stream) and the payload CRC (native) over the rest.
 */
export class SlotPackageCheck {
  header: FwpkgHeader | undefined;
  payloadCrc = 0;

  constructor(private readonly hashers: SlotHashers) {}

  /** The next `chunk` of the package, in order; throws FwpkgError for a header that is not one. */
  take(chunk: Uint8Array): void {
    let payloadFrom = 0;
    if (!this.header) {
      this.header = parseFwpkgHeader(chunk);
      this.hashers.setImages(this.header.components.map((c) => [c.locationOffset, c.locationOffset + c.size]));
      payloadFrom = this.header.headerSize;
    }
    if (this.header.payloadChecksum !== undefined)
      this.payloadCrc = crc32(chunk.subarray(payloadFrom), this.payloadCrc);
  }

  /** The header once the whole package went by; for an empty one, the parser names the field it stops in. */
  finalHeader(): FwpkgHeader {
    return (this.header ??= parseFwpkgHeader(new Uint8Array(0)));
  }
}

/**
 * One pass over a package file in SLOT_BYTES reads into shared memory, hashed by two worker threads (the
 * package, its images) while this one parses the header and runs the payload CRC. Memory: the slots plus the
 * header, whatever the file size. The checks after the last byte (images inside the file, the payload checksum)
 * are the caller's, as for a streamed package.
 */
export async function scanFile(file: FileHandle): Promise<FileScan> {
  const hashers = new SlotHashers(['package', 'images']);
  try {
    const check = new SlotPackageCheck(hashers);
    let position = 0;
    for (;;) {
      const { slot, view } = await hashers.take();
      const { bytesRead } = await Promise.race([file.read(view, 0, SLOT_BYTES, position), hashers.failure]);
      if (bytesRead === 0) break;
      check.take(view.subarray(0, bytesRead));
      hashers.submit(slot, position, bytesRead);
      position += bytesRead;
    }
    const header = check.finalHeader();
    const [packageDigests, componentSha256] = await hashers.digests();
    return {
      header,
      size: position,
      sha256: packageDigests![0]!,
      componentSha256: componentSha256!,
      payloadCrc: check.payloadCrc,
    };
  } finally {
    hashers.close();
  }
}
