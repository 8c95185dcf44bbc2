import type { Reader } from './reader.js';
import { FwpkgError } from './errors.js';
import { bytesOf, encodeString } from './strings.js';

export const DESCRIPTOR_UUID = 0x0002;
export const DESCRIPTOR_VENDOR_DEFINED = 0xffff;

/** DSP0267 descriptor types: name and fixed DescriptorLength (none for variable ones). */
const TYPES = new Map<number, { name: string; length?: number }>([
  [0x0000, { name: 'PCI Vendor ID', length: 2 }],
  [0x0001, { name: 'IANA Enterprise ID', length: 4 }],
  [0x0002, { name: 'UUID', length: 16 }],
  [0x0003, { name: 'PnP Vendor ID', length: 3 }],
  [0x0004, { name: 'ACPI Vendor ID', length: 4 }],
  [0x0005, { name: 'IEEE Assigned Company ID', length: 3 }],
  [0x0006, { name: 'SCSI Vendor ID', length: 8 }],
  [0x0100, { name: 'PCI Device ID', length: 2 }],
  [0x0101, { name: 'PCI Subsystem Vendor ID', length: 2 }],
  [0x0102, { name: 'PCI Subsystem ID', length: 2 }],
  [0x0103, { name: 'PCI Revision ID', length: 1 }],
  [0x0104, { name: 'PnP Product Identifier', length: 4 }],
  [0x0105, { name: 'ACPI Product Identifier', length: 4 }],
  [0x0106, { name: 'ASCII Model Number (Long String)', length: 40 }],
  [0x0107, { name: 'ASCII Model Number (Short String)', length: 10 }],
  [0x0108, { name: 'SCSI Product ID', length: 16 }],
  [0x0109, { name: 'UBM Controller Device Code', length: 4 }],
  [0x010a, { name: 'IEEE EUI-64 ID', length: 8 }],
  [0x010b, { name: 'PCI Revision ID Range', length: 2 }],
  [DESCRIPTOR_VENDOR_DEFINED, { name: 'Vendor Defined' }],
]);

function descriptorTypeName(type: number): string {
  return TYPES.get(type)?.name ?? `Reserved (0x${type.toString(16).padStart(4, '0')})`;
}

export interface Descriptor {
  type: number;
  /** DSP0267's name for the type, e.g. 'UUID', 'IANA Enterprise ID', 'Vendor Defined'. */
  typeName: string;
  /** Lower-case hex of the data as stored; for a vendor-defined descriptor, the data after the title. */
  data: string;
  /** Vendor-defined descriptors: VendorDefinedDescriptorTitleString and its string type. */
  title?: string;
  titleType?: number;
}

export function readDescriptor(r: Reader): Descriptor {
  const type = r.u16('DescriptorType');
  const lengthAt = r.offset;
  const length = r.u16('DescriptorLength');
  const fixed = TYPES.get(type)?.length;
  if (fixed !== undefined && length !== fixed) {
    throw new FwpkgError(
      'bad_field',
      'DescriptorLength',
      lengthAt,
      `${descriptorTypeName(type)} descriptors are ${fixed} bytes, not ${length}`,
    );
  }
  const d = r.window(length, 'DescriptorData', 'the descriptor (DescriptorLength)');
  const typeName = descriptorTypeName(type);
  if (type !== DESCRIPTOR_VENDOR_DEFINED) return { type, typeName, data: d.hex(length, 'DescriptorData') };
  const titleType = d.stringType('VendorDefinedDescriptorTitleStringType');
  const titleLength = d.u8('VendorDefinedDescriptorTitleStringLength');
  const title = d.string(titleType, titleLength, 'VendorDefinedDescriptorTitleString');
  return { type, typeName, title, titleType, data: d.hex(d.remaining, 'VendorDefinedDescriptorData') };
}

export interface DescriptorSpec {
  type: number;
  /** Hex text or bytes; for a vendor-defined descriptor, the data after the title. */
  data: string | Uint8Array;
  /** Required for vendor-defined descriptors. */
  title?: string;
}

export function encodeDescriptor(spec: DescriptorSpec): Buffer {
  const data = bytesOf(spec.data);
  let value = data;
  if (spec.type === DESCRIPTOR_VENDOR_DEFINED) {
    if (spec.title === undefined) throw new RangeError('a vendor-defined descriptor needs a title');
    const title = encodeString(spec.title);
    value = Buffer.concat([Buffer.from([title.type, title.bytes.length]), title.bytes, data]);
  } else {
    const fixed = TYPES.get(spec.type)?.length;
    if (fixed !== undefined && data.length !== fixed)
      throw new RangeError(`${descriptorTypeName(spec.type)} descriptors are ${fixed} bytes, got ${data.length}`);
  }
  if (value.length > 0xffff) throw new RangeError('descriptor data is longer than 65535 bytes');
  const head = Buffer.alloc(4);
  head.writeUInt16LE(spec.type, 0);
  head.writeUInt16LE(value.length, 2);
  return Buffer.concat([head, value]);
}
