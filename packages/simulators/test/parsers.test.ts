import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseFwpkgHeader } from '@fleet/fwpkg';
import { readMultipart } from '../src/redfish/multipart.js';
import { buildPackage, multipart } from './helpers.js';

describe('PLDM test packages', () => {
  it('carry the devices, components and stamps the tests ask for', () => {
    const pkg = parseFwpkgHeader(
      buildPackage(
        [{ uuid: '00112233445566778899aabbccddeeff', components: [0, 2] }],
        [
          { identifier: 1, stamp: 10, version: 'a' },
          { identifier: 2, stamp: 20, version: 'b' },
          { identifier: 3, stamp: 30, version: 'c' },
        ],
      ),
    );
    assert.deepEqual(pkg.devices[0]!.applicableComponents, [0, 2]);
    assert.deepEqual(
      pkg.components.map((c) => [c.identifier, c.comparisonStamp, c.version]),
      [
        [1, 10, 'a'],
        [2, 20, 'b'],
        [3, 30, 'c'],
      ],
    );
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
      const out = await readMultipart(chunks(), boundary, {
        keepFileBytes: 100,
        maxFieldBytes: 1000,
        maxTotalBytes: 1e6,
      });
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
    await assert.rejects(
      readMultipart(once(), 'b', { keepFileBytes: 10, maxFieldBytes: 100, maxTotalBytes: 1000 }),
      /closing boundary/,
    );
  });
});
