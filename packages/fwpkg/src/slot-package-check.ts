import { crc32 } from './crc32.js';
import { parseFwpkgHeader } from './header-parser.js';
import type { SlotHashers } from './slot-hashers.js';
import type { FwpkgHeader } from './types.js';

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
