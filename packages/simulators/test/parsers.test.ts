import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readMultipart } from '../src/redfish/multipart.js';
import { parsePldmHeader, PldmError } from '../src/redfish/pldm.js';
import { buildPackage, multipart } from './helpers.js';

const vectors = fileURLToPath(new URL('../../../../shared/peers/pldm-fwpkg-vectors/', import.meta.url));

describe('PLDM package header', () => {
  it('reads the DSP0267 1.0 vector the way NVIDIA fwpkg_unpack does', { skip: !existsSync(vectors) && 'shared vectors not present' }, () => {
    const pkg = parsePldmHeader(readFileSync(`${vectors}pkg-1.0.0.fwpkg`));
    const expected = JSON.parse(readFileSync(`${vectors}pkg-1.0.0.nvidia-unpack.json`, 'utf8')) as {
      PackageHeaderInformation: { PackageHeaderSize: number; PackageVersionString: string };
      FirmwareDeviceIdentificationArea: { FirmwareDeviceIDRecords: { ApplicableComponents: number[]; RecordDescriptors: { InitialDescriptorData?: string }[] }[] };
    };
    assert.equal(pkg.headerSize, expected.PackageHeaderInformation.PackageHeaderSize);
    assert.equal(pkg.version, expected.PackageHeaderInformation.PackageVersionString);
    const records = expected.FirmwareDeviceIdentificationArea.FirmwareDeviceIDRecords;
    assert.deepEqual(pkg.devices.map((d) => d.applicableComponents), records.map((r) => r.ApplicableComponents));
    assert.deepEqual(pkg.devices.map((d) => `0x${d.descriptors[0]!.data}`), records.map((r) => r.RecordDescriptors[0]!.InitialDescriptorData));
    assert.deepEqual(pkg.components.map((c) => c.identifier), [100, 200, 300]);
  });

  it('rejects the 1.3 header format and truncated headers', { skip: !existsSync(vectors) && 'shared vectors not present' }, () => {
    assert.throws(() => parsePldmHeader(readFileSync(`${vectors}pkg-1.3.0.fwpkg`)), PldmError);
    assert.throws(() => parsePldmHeader(readFileSync(`${vectors}pkg-1.0.0.fwpkg`).subarray(0, 100)), /truncated|longer/);
  });

  it('round-trips a package built by the tests', () => {
    const pkg = parsePldmHeader(buildPackage([{ uuid: '00112233445566778899aabbccddeeff', components: [0, 2] }], [
      { identifier: 1, stamp: 10, version: 'a' },
      { identifier: 2, stamp: 20, version: 'b' },
      { identifier: 3, stamp: 30, version: 'c' },
    ]));
    assert.deepEqual(pkg.devices[0]!.applicableComponents, [0, 2]);
    assert.deepEqual(pkg.components.map((c) => [c.identifier, c.comparisonStamp, c.version]), [[1, 10, 'a'], [2, 20, 'b'], [3, 30, 'c']]);
  });
});

describe('multipart reader', () => {
  it('finds both parts wherever the chunk boundaries fall, keeping only the head of the file', async () => {
    const file = Buffer.alloc(5000, 0x41);
    file.write('HEAD', 0);
    const { body, contentType } = multipart({ Targets: [] }, file, 'x.fwpkg');
    const boundary = contentType.split('boundary=')[1]!;
    for (const size of [1, 2, 3, 7, 64, 1000, body.length]) {
      async function* chunks() {
        for (let i = 0; i < body.length; i += size) yield body.subarray(i, i + size);
      }
      const out = await readMultipart(chunks(), boundary, { keepFileBytes: 100, maxFieldBytes: 1000, maxTotalBytes: 1e6 });
      assert.equal(out.fields.get('UpdateParameters'), '{"Targets":[]}', `chunk size ${size}`);
      const f = out.files.get('UpdateFile')!;
      assert.equal(f.size, 5000);
      assert.equal(f.head.length, 100);
      assert.equal(f.head.subarray(0, 4).toString(), 'HEAD');
    }
  });

  it('refuses a body without the closing boundary', async () => {
    async function* once() {
      yield Buffer.from('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue');
    }
    await assert.rejects(readMultipart(once(), 'b', { keepFileBytes: 10, maxFieldBytes: 100, maxTotalBytes: 1000 }), /closing boundary/);
  });
});
