import type { FileHandle } from 'node:fs/promises';
import { SLOT_BYTES, SlotHashers } from './slot-hashers.js';
import { SlotPackageCheck } from './slot-package-check.js';
import type { FwpkgHeader } from './types.js';

export interface FileScan {
  header: FwpkgHeader;
  size: number;
  sha256: string;
  componentSha256: string[];
  payloadCrc: number;
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
