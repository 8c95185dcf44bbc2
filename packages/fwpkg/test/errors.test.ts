import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildFwpkg, FwpkgError, inspectFwpkg, parseFwpkgHeader, type FwpkgErrorCode } from '../src/index.js';
import { chunked, reseal, sampleSpec, vectors } from './helpers.js';

const vector = (name: string) => readFileSync(join(vectors, name));
const packages: [string, Buffer][] = [
  ['pkg-1.0.0', vector('pkg-1.0.0.fwpkg')],
  ['built 1.1', buildFwpkg(sampleSpec('1.1'))],
  ['built 1.2', buildFwpkg(sampleSpec('1.2'))],
  ['pkg-1.3.0', vector('pkg-1.3.0.fwpkg')],
];

/** Asserts a FwpkgError with this code, field and offset, whose message names both. */
function expectError(err: unknown, code: FwpkgErrorCode, field: string, offset: number): FwpkgError {
  assert.ok(err instanceof FwpkgError, `expected a FwpkgError, got ${String(err)}`);
  assert.deepEqual([err.code, err.field, err.offset], [code, field, offset], err.message);
  assert.ok(err.message.includes(field) && err.message.includes(`byte ${offset}`), err.message);
  return err;
}
const parseError = (buf: Uint8Array) => {
  try {
    parseFwpkgHeader(buf);
  } catch (err) {
    return err;
  }
  assert.fail('parsed');
};
const inspectError = (buf: Uint8Array) =>
  inspectFwpkg(chunked(buf, 64)).then(
    () => assert.fail('inspected'),
    (err: unknown) => err,
  );

const headerSize = (pkg: Buffer) => pkg.readUInt16LE(17);
const header = (pkg: Buffer) => parseFwpkgHeader(pkg);

describe('malformed packages', () => {
  for (const [name, pkg] of packages) {
    it(`${name}: a prefix cut at any header byte is truncated, with the bytes a retry needs`, () => {
      const size = headerSize(pkg);
      for (let n = 0; n < size; n++) {
        const err = parseError(pkg.subarray(0, n));
        assert.ok(err instanceof FwpkgError && err.code === 'truncated', `cut at ${n}: ${String(err)}`);
        assert.equal(err.offset, n);
        assert.equal(err.needBytes, n < 19 ? 19 : size);
      }
      assert.equal(header(pkg).headerSize, size);
    });

    it(`${name}: a stream that ends inside the header, or inside an image, is reported as such`, async () => {
      const size = headerSize(pkg);
      expectError(await inspectError(pkg.subarray(0, size - 1)), 'truncated', 'PackageHeaderSize', size - 1);
      const last = header(pkg).components.find((c) => c.size > 0 && c.locationOffset + c.size === pkg.length)!;
      expectError(
        await inspectError(pkg.subarray(0, pkg.length - 1)),
        'out_of_bounds',
        'ComponentSize',
        last.recordOffset + 16,
      );
    });
  }

  it('a changed header byte fails PackageHeaderChecksum, wherever it is', () => {
    for (const [, pkg] of packages) {
      const checksumAt = headerSize(pkg) - (pkg[16] === 4 ? 8 : 4);
      for (const at of [19, 40, checksumAt - 1, checksumAt]) {
        const bad = Buffer.from(pkg);
        bad[at]! ^= 0x01;
        expectError(parseError(bad), 'checksum_mismatch', 'PackageHeaderChecksum', checksumAt);
      }
    }
  });

  it('a changed image byte fails the 1.3 PackagePayloadChecksum', async () => {
    const pkg = Buffer.from(vector('pkg-1.3.0.fwpkg'));
    pkg[pkg.length - 1]! ^= 0x80;
    expectError(await inspectError(pkg), 'checksum_mismatch', 'PackagePayloadChecksum', headerSize(pkg) - 4);
  });

  it('an unknown PackageHeaderIdentifier is an unsupported revision; a mismatched format revision a bad field', () => {
    const pkg = Buffer.from(vector('pkg-1.0.0.fwpkg'));
    pkg[0]! ^= 0xff;
    expectError(parseError(pkg), 'unsupported_revision', 'PackageHeaderIdentifier', 0);
    const v13 = reseal(Buffer.from(vector('pkg-1.3.0.fwpkg')).fill(3, 16, 17));
    expectError(parseError(v13), 'bad_field', 'PackageHeaderFormatRevision', 16);
  });

  it('an image beyond the end of the file is out of bounds, by its offset or by its size', async () => {
    const pkg = vector('pkg-1.0.0.fwpkg');
    const last = header(pkg).components.at(-1)!;
    const moved = Buffer.from(pkg);
    moved.writeUInt32LE(pkg.length + 10, last.recordOffset + 12);
    expectError(await inspectError(reseal(moved)), 'out_of_bounds', 'ComponentLocationOffset', last.recordOffset + 12);
    const grown = Buffer.from(pkg);
    grown.writeUInt32LE(last.size + 1, last.recordOffset + 16);
    expectError(await inspectError(reseal(grown)), 'out_of_bounds', 'ComponentSize', last.recordOffset + 16);
  });

  it('an image inside the header is out of bounds', () => {
    const pkg = Buffer.from(vector('pkg-1.3.0.fwpkg'));
    const first = header(pkg).components[0]!;
    pkg.writeUInt32LE(100, first.recordOffset + 12);
    expectError(parseError(reseal(pkg)), 'out_of_bounds', 'ComponentLocationOffset', first.recordOffset + 12);
  });

  it('an ApplicableComponents bit for a component the package lacks is a bad field', () => {
    for (const [, pkg] of packages) {
      const bad = Buffer.from(pkg);
      const record = header(pkg).devices[0]!;
      const bitmapAt = record.recordOffset + (pkg[16] === 4 ? 15 : 11);
      bad[bitmapAt]! |= 1 << 5;
      expectError(parseError(reseal(bad)), 'bad_field', 'ApplicableComponents', bitmapAt);
    }
  });

  it('lengths that contradict each other name the field that overruns', () => {
    const pkg = vector('pkg-1.0.0.fwpkg');
    const device = header(pkg).devices[1]!;
    const longer = Buffer.from(pkg);
    longer.writeUInt16LE(longer.readUInt16LE(device.recordOffset) + 1, device.recordOffset);
    expectError(parseError(reseal(longer)), 'bad_field', 'RecordLength', device.recordOffset);
    const pastHeader = Buffer.from(pkg);
    pastHeader.writeUInt16LE(3000, device.recordOffset);
    expectError(parseError(reseal(pastHeader)), 'bad_field', 'RecordLength', device.recordOffset);

    const uuidLength = Buffer.from(pkg);
    const descriptorAt = device.recordOffset + 11 + 1 + device.imageSetVersion.length;
    uuidLength.writeUInt16LE(15, descriptorAt + 2);
    expectError(parseError(reseal(uuidLength)), 'bad_field', 'DescriptorLength', descriptorAt + 2);

    const stringType = Buffer.from(pkg);
    stringType[34] = 9;
    expectError(parseError(reseal(stringType)), 'bad_field', 'PackageVersionStringType', 34);

    const headerTooSmall = Buffer.from(pkg);
    headerTooSmall.writeUInt16LE(headerSize(pkg) - 1, 17);
    const lastVersionAt = header(pkg).components.at(-1)!.recordOffset + 22;
    expectError(parseError(reseal(headerTooSmall)), 'bad_field', 'ComponentVersionString', lastVersionAt);
  });
});
