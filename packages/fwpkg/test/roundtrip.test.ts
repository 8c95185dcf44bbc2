import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, describe, it } from 'node:test';
import {
  buildFwpkg,
  DESCRIPTOR_UUID,
  FwpkgError,
  FwpkgInspector,
  inspectFwpkg,
  inspectFwpkgFile,
  parseFwpkgHeader,
  REVISIONS,
  writeFwpkgFile,
  type Descriptor,
  type FwpkgHeader,
  type FwpkgRevision,
  type FwpkgSpec,
} from '../src/index.js';
import { decodeString } from '../src/strings.js';
import { chunked, firmware, logical, sampleSpec, sha256, SWITCH, TRAY, vectors } from './helpers.js';

/** What parsing `sampleSpec(revision)` must give back, written out rather than derived. */
function sampleHeader(revision: FwpkgRevision): ReturnType<typeof logical> {
  const { identifier, formatRevision, downstreamDevices, componentOpaqueData, referenceManifest } = REVISIONS[revision];
  const manifest = (data: string) => (referenceManifest ? { referenceManifest: data } : {});
  const opaque = (data: string) => (componentOpaqueData ? { opaqueData: data } : {});
  const uuid = (data: string) => ({ type: DESCRIPTOR_UUID, typeName: 'UUID', data });
  return {
    revision,
    identifier,
    formatRevision,
    releaseDateTime: {
      utcOffset: 0,
      microsecond: 89_000,
      second: 7,
      minute: 6,
      hour: 5,
      day: 14,
      month: 9,
      year: 2025,
      utcResolution: 0,
      timeResolution: 0,
    },
    componentBitmapBitLength: 8,
    packageVersion: 'GB200Nvl-25.09-1',
    packageVersionType: 1,
    devices: [
      {
        updateOptionFlags: 1,
        applicableComponents: [0, 2],
        descriptors: [
          uuid(TRAY),
          { type: 1, typeName: 'IANA Enterprise ID', data: '47160000' },
          { type: 0xffff, typeName: 'Vendor Defined', title: 'NVIDIA', titleType: 1, data: 'cafe' },
        ],
        packageData: 'a1b2c3',
        ...manifest('0102030405'),
        imageSetVersion: 'tray-set-1',
        imageSetVersionType: 1,
      },
      {
        updateOptionFlags: 0,
        applicableComponents: [1],
        descriptors: [
          { type: 0, typeName: 'PCI Vendor ID', data: 'de10' },
          { type: 0x100, typeName: 'PCI Device ID', data: '2342' },
        ],
        packageData: '',
        ...manifest(''),
        imageSetVersion: 'ünïcode-set',
        imageSetVersionType: 2,
      },
    ],
    downstreamDevices: downstreamDevices
      ? [
          {
            updateOptionFlags: 1,
            applicableComponents: [1],
            descriptors: [uuid(SWITCH)],
            packageData: '',
            ...manifest('ff'),
            selfContainedActivationMinVersion: '1.2.3',
            selfContainedActivationMinVersionType: 1,
            selfContainedActivationMinComparisonStamp: 0x10203,
          },
          {
            updateOptionFlags: 0,
            applicableComponents: [0, 1, 2],
            descriptors: [uuid(TRAY)],
            packageData: '00',
            ...manifest(''),
            selfContainedActivationMinVersion: '',
            selfContainedActivationMinVersionType: 0,
          },
        ]
      : [],
    components: [
      {
        classification: 10,
        identifier: 0x10,
        comparisonStamp: 0x01020304,
        options: 0b10,
        requestedActivationMethod: 0b1100,
        version: 'BMC 25.09',
        versionType: 1,
        ...opaque('abcd'),
      },
      {
        classification: 10,
        identifier: 0x20,
        comparisonStamp: 0xffffffff,
        options: 0,
        requestedActivationMethod: 0,
        version: 'GPU 97.00',
        versionType: 1,
        ...opaque(''),
      },
      {
        classification: 1,
        identifier: 0x30,
        comparisonStamp: 0xffffffff,
        options: 1,
        requestedActivationMethod: 0,
        version: 'empty',
        versionType: 1,
        ...opaque(''),
      },
    ],
  };
}

const IMAGE_SHA = [sha256(firmware), sha256(Buffer.alloc(5000, 0x5a)), sha256(Buffer.alloc(0))];
const REVISION_LIST = Object.keys(REVISIONS) as FwpkgRevision[];

/** The spec that rebuilds a parsed package, with its images. */
function specOf(h: FwpkgHeader, file: Buffer): FwpkgSpec {
  const descriptors = (list: Descriptor[]) =>
    list.map((x) => ({ type: x.type, data: x.data, ...(x.title !== undefined ? { title: x.title } : {}) }));
  const manifest = (m: string | undefined) => (m !== undefined ? { referenceManifest: m } : {});
  return {
    revision: h.revision,
    packageVersion: h.packageVersion,
    releaseDateTime: h.releaseDateTime,
    componentBitmapBitLength: h.componentBitmapBitLength,
    devices: h.devices.map((d) => ({
      descriptors: descriptors(d.descriptors),
      applicableComponents: d.applicableComponents,
      imageSetVersion: d.imageSetVersion,
      updateOptionFlags: d.updateOptionFlags,
      packageData: d.packageData,
      ...manifest(d.referenceManifest),
    })),
    downstreamDevices: h.downstreamDevices.map((d) => ({
      descriptors: descriptors(d.descriptors),
      applicableComponents: d.applicableComponents,
      updateOptionFlags: d.updateOptionFlags,
      ...(d.selfContainedActivationMinComparisonStamp !== undefined
        ? {
            selfContainedActivationMin: {
              version: d.selfContainedActivationMinVersion,
              comparisonStamp: d.selfContainedActivationMinComparisonStamp,
            },
          }
        : {}),
      packageData: d.packageData,
      ...manifest(d.referenceManifest),
    })),
    components: h.components.map((c) => ({
      classification: c.classification,
      identifier: c.identifier,
      comparisonStamp: c.comparisonStamp,
      options: c.options,
      activationMethod: c.requestedActivationMethod,
      version: c.version,
      ...(c.opaqueData !== undefined ? { opaqueData: c.opaqueData } : {}),
      image: { data: file.subarray(c.locationOffset, c.locationOffset + c.size) },
    })),
  };
}

describe('build and read back', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fwpkg-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const revision of REVISION_LIST) {
    it(`DSP0267 ${revision}: every field survives, whatever the chunking`, async () => {
      const pkg = buildFwpkg(sampleSpec(revision));
      const header = parseFwpkgHeader(pkg);
      assert.deepEqual(logical(header), sampleHeader(revision));
      assert.deepEqual(
        header.components.map((c) => c.size),
        [1000, 5000, 0],
      );
      assert.equal(header.components[0]!.locationOffset, header.headerSize);
      for (const size of [1, 7, 4096, pkg.length]) {
        const result = await inspectFwpkg(chunked(pkg, size));
        assert.deepEqual(result.header, header, `chunks of ${size}`);
        assert.deepEqual([result.size, result.sha256, result.componentSha256], [pkg.length, sha256(pkg), IMAGE_SHA]);
      }
    });
  }

  for (const name of ['pkg-1.0.0.fwpkg', 'pkg-1.3.0.fwpkg']) {
    it(`rebuilds ${name} byte for byte from what it parsed`, () => {
      const file = readFileSync(join(vectors, name));
      assert.ok(buildFwpkg(specOf(parseFwpkgHeader(file), file)).equals(file));
    });
  }

  for (const revision of ['1.0', '1.3'] as const) {
    it(`writeFwpkgFile streams the same ${revision} bytes buildFwpkg makes`, async () => {
      const path = join(dir, `sample-${revision}.fwpkg`);
      const spec = sampleSpec(revision);
      const written = await writeFwpkgFile(path, spec);
      const expected = buildFwpkg(spec);
      assert.ok(readFileSync(path).equals(expected));
      assert.deepEqual(written, { size: expected.length, sha256: sha256(expected) });
      const inspected = await inspectFwpkgFile(path);
      assert.deepEqual([inspected.sha256, inspected.componentSha256], [written.sha256, IMAGE_SHA]);
    });
  }

  it('FwpkgInspector ends a pipeline and hands over its result', async () => {
    const pkg = buildFwpkg(sampleSpec('1.3'));
    const inspector = new FwpkgInspector();
    await pipeline(Readable.from(chunked(pkg, 333)), inspector);
    assert.equal((await inspector.result).sha256, sha256(pkg));
  });

  it('FwpkgInspector fails the pipeline as soon as the header is bad, before the images stream', async () => {
    const pkg = buildFwpkg(sampleSpec('1.0'));
    pkg[40]! ^= 0xff;
    let sent = 0;
    const source = async function* () {
      for await (const chunk of chunked(pkg, 1024)) {
        sent += chunk.length;
        yield chunk;
      }
    };
    const inspector = new FwpkgInspector();
    const failed = await pipeline(source(), inspector).catch((e: unknown) => e);
    assert.ok(failed instanceof FwpkgError && failed.code === 'checksum_mismatch', String(failed));
    assert.equal(await inspector.result.catch((e: unknown) => e), failed);
    assert.ok(sent < pkg.length / 2, `${sent} of ${pkg.length} bytes were read`);
  });

  it('a destroyed inspector nobody reads leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', record);
    const inspector = new FwpkgInspector();
    inspector.on('error', () => undefined); // the stream's own 'error' event is its owner's to handle
    inspector.destroy(new Error('upload aborted'));
    await new Promise((r) => inspector.once('close', r));
    await new Promise((r) => setImmediate(r));
    process.off('unhandledRejection', record);
    assert.deepEqual(unhandled, []);
    await assert.rejects(inspector.result, /upload aborted/);
  });

  it('decodes every DSP0267 string type (the builder writes only ASCII and UTF-8)', () => {
    const ab = (...bytes: number[]) => Buffer.from(bytes);
    assert.deepEqual(
      [
        decodeString(1, ab(0x41, 0x42)),
        decodeString(2, Buffer.from('Ünï', 'utf8')),
        decodeString(3, ab(0xff, 0xfe, 0x41, 0, 0x42, 0)),
        decodeString(3, ab(0xfe, 0xff, 0, 0x41, 0, 0x42)),
        decodeString(3, ab(0, 0x41, 0, 0x42)),
        decodeString(4, ab(0x41, 0, 0x42, 0)),
        decodeString(5, ab(0, 0x41, 0, 0x42, 0)),
      ],
      ['AB', 'Ünï', 'AB', 'AB', 'AB', 'AB', 'AB'],
    );
  });

  it('refuses specs a revision cannot carry', () => {
    const spec = sampleSpec('1.3');
    assert.throws(() => buildFwpkg({ ...spec, revision: '1.0' }), /no downstream device records/);
    assert.throws(() => buildFwpkg({ ...spec, revision: '1.2', downstreamDevices: [] }), /no reference manifest/);
    assert.throws(
      () =>
        buildFwpkg({
          ...sampleSpec('1.0'),
          devices: [{ descriptors: [], applicableComponents: [3], imageSetVersion: 'x' }],
        }),
      /applicable component 3/,
    );
    assert.throws(
      () =>
        buildFwpkg({
          ...sampleSpec('1.0'),
          devices: [
            { descriptors: [{ type: DESCRIPTOR_UUID, data: 'abcd' }], applicableComponents: [], imageSetVersion: 'x' },
          ],
        }),
      /UUID descriptors are 16 bytes/,
    );
  });
});
