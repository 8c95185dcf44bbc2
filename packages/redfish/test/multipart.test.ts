import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { multipartFirmwareBody } from '../src/index.js';

const KiB = 1024;
const params = { Targets: ['/redfish/v1/Chassis/HGX_Chassis_0'], ForceUpdate: false };

/** Consumes a body as undici does (one chunk at a time), copying each chunk before asking for the next. */
async function drain(body: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; chunks: Uint8Array[] }> {
  const copies: Buffer[] = [];
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) {
    chunks.push(chunk);
    copies.push(Buffer.from(chunk));
  }
  return { bytes: Buffer.concat(copies), chunks };
}

function iterable(source: ReturnType<ReturnType<typeof multipartFirmwareBody>['open']>): AsyncIterable<Uint8Array> {
  assert.ok(typeof source === 'object' && Symbol.asyncIterator in source, 'the firmware body is an async iterable');
  return source;
}

describe('multipartFirmwareBody', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-multipart-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('frames the file exactly, Content-Length included, reading it into a fixed pool of buffers', async () => {
    const path = join(dir, 'image.bin');
    const data = randomBytes(3 * 1024 * KiB + 777); // 13 reads, the last one short
    await writeFile(path, data);
    const body = multipartFirmwareBody(params, { path, size: data.length, name: 'a"b\r\n.bin' });
    const boundary = /boundary=(\S+)$/.exec(body.contentType)?.[1];
    assert.ok(boundary);

    const { bytes, chunks } = await drain(iterable(body.open()));
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="UpdateParameters"\r\n` +
      `Content-Type: application/json\r\n\r\n${JSON.stringify(params)}\r\n--${boundary}\r\n` +
      'Content-Disposition: form-data; name="UpdateFile"; filename="a_b__.bin"\r\n' +
      'Content-Type: application/octet-stream\r\n\r\n';
    const expected = Buffer.concat([Buffer.from(head), data, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    assert.equal(body.length, expected.length);
    assert.ok(bytes.equals(expected), 'body bytes differ from head + file + tail');

    // The file's 13 chunks share 3 buffers: memory per body does not grow with the image.
    const fileChunks = chunks.slice(1, -1);
    assert.equal(fileChunks.length, 13);
    assert.ok(fileChunks.every((c) => c.byteLength <= 256 * KiB));
    assert.equal(new Set(fileChunks.map((c) => c.buffer)).size, 3);
  });

  it('an empty file is the framing alone', async () => {
    const path = join(dir, 'empty.bin');
    await writeFile(path, Buffer.alloc(0));
    const body = multipartFirmwareBody(params, { path, size: 0, name: 'empty.bin' });
    const { bytes, chunks } = await drain(iterable(body.open()));
    assert.equal(chunks.length, 2);
    assert.equal(bytes.length, body.length);
  });

  it('fails when the file is shorter than its stat()ed size, and never reads past that size', async () => {
    const path = join(dir, 'short.bin');
    await writeFile(path, randomBytes(300 * KiB));
    const shrunk = multipartFirmwareBody(params, { path, size: 400 * KiB, name: 'short.bin' });
    await assert.rejects(drain(iterable(shrunk.open())), /shrank during upload \(307200 of 409600 bytes read\)/);

    const grown = multipartFirmwareBody(params, { path, size: 100 * KiB, name: 'short.bin' });
    const { bytes } = await drain(iterable(grown.open()));
    assert.equal(bytes.length, grown.length);
  });

  it('closes the file when the consumer stops early, with a read still in flight', async () => {
    const path = join(dir, 'abandoned.bin');
    await writeFile(path, randomBytes(2 * 1024 * KiB));
    const fds = async () => (await readdir('/proc/self/fd')).length;
    const before = await fds();
    const body = multipartFirmwareBody(params, { path, size: 2 * 1024 * KiB, name: 'abandoned.bin' });
    let seen = 0;
    for await (const chunk of iterable(body.open())) {
      seen += chunk.byteLength;
      if (seen > 256 * KiB) break; // head and the first file chunk; the second read is under way
    }
    assert.equal(await fds(), before);
  });
});
