/**
 * @fleet/fwpkg: PLDM firmware update packages (DMTF DSP0267 1.0, 1.1, 1.2 and 1.3).
 *
 * Reading, without ever holding a package's images in memory:
 * - `parseFwpkgHeader(prefix)`: the header from the first bytes of a package. A short prefix
 *   throws FwpkgError `truncated` whose `needBytes` says how much to read (the header size,
 *   once the first 19 bytes are in).
 * - `inspectFwpkg(stream)` / `inspectFwpkgFile(path)`: one pass over a whole package: header,
 *   size, sha256 of the package and of each image, every image inside the file, and for 1.3 the
 *   payload checksum. Files of 64 MiB and more are read in 4 MiB chunks into shared memory and
 *   hashed on two worker threads (package digest, image digests), about one SHA-256 pass long.
 * - `new FwpkgInspector()`: the same as a Writable, for the end of a pipeline that also stores
 *   the bytes, e.g. `await pipeline(upload, tee, inspector); const r = await inspector.result`.
 * - `new ParallelFwpkgInspector(forward)` / `new ParallelSha256(forward)`: the same (or the digest
 *   alone) for large streams: the bytes are copied into 4 MiB shared-memory slots hashed on worker
 *   threads, and each filled slot goes to `forward` (a write to disk), so the receiving thread
 *   neither hashes nor writes in small pieces. From PARALLEL_FILE_BYTES on.
 * - `SlotFile.over(handle)`: writes those slots to the file around the page cache (O_DIRECT, on
 *   local block file systems) where aligned, through `handle` where not.
 *
 * Writing, for tests, benchmarks and simulators: `buildFwpkg(spec)` in memory,
 * `writeFwpkgFile(path, spec)` streamed to disk (images may be `{ size, fill }`).
 *
 * Every malformed input raises FwpkgError { code, field, offset }: the DSP0267 field and the
 * byte offset where the package went wrong.
 */
export { FwpkgError, type FwpkgErrorCode } from './errors.js';
export { parseFwpkgHeader } from './header-parser.js';
export {
  FwpkgInspector,
  inspectFwpkg,
  inspectFwpkgFile,
  PARALLEL_FILE_BYTES,
  type FwpkgInspection,
} from './inspector.js';
export { ParallelFwpkgInspector, ParallelSha256, type SlotForward } from './parallel-inspector.js';
export {
  directWriteFallbackReasons,
  directWritesIn,
  openDirect,
  SlotFile,
  type DirectOpener,
  type DirectWriteFallback,
  type SlotHandle,
} from './slot-file.js';
export {
  buildFwpkg,
  writeFwpkgFile,
  type FwpkgSpec,
  type DeviceSpec,
  type DownstreamDeviceSpec,
  type ComponentSpec,
  type ImageSpec,
} from './builder.js';
export type { FwpkgHeader, FirmwareDeviceRecord, DownstreamDeviceRecord, ComponentImageInfo } from './types.js';
export { DESCRIPTOR_UUID, DESCRIPTOR_VENDOR_DEFINED, type Descriptor, type DescriptorSpec } from './descriptors.js';
export { REVISIONS, type FwpkgRevision, type RevisionInfo } from './revisions.js';
export type { Timestamp104 } from './timestamp.js';
export { crc32 } from './crc32.js';
