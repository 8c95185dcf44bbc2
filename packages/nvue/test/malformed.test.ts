import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { json, serve, type TestServer } from '../../redfish/test/helpers/servers.js';
import {
  getCertificate,
  getPlatformFirmware,
  getVersion,
  listImageFiles,
  NvueClient,
  NvueError,
} from '../src/index.js';

// Regressions of what the fuzzer (fuzz.test.ts) found: malformed NVUE answers end as an NvueError naming the switch,
// method and URI, or read as absent, never as a TypeError.

describe('malformed NVUE answers', () => {
  const servers: TestServer[] = [];
  const clients: NvueClient[] = [];
  const clientOf = async (answer: (res: Parameters<typeof json>[0]) => void, maxResponseBytes?: number) => {
    const server = await serve((_req, res) => answer(res));
    servers.push(server);
    const client = new NvueClient({
      baseUrl: server.url,
      switchId: 'sw-9',
      credentials: { username: 'admin', password: 'pw' },
      maxAttempts: 1,
      ...(maxResponseBytes ? { maxResponseBytes } : {}),
    });
    clients.push(client);
    return client;
  };
  after(async () => {
    for (const c of clients) await c.close();
    for (const s of servers) await s.close();
  });

  const protocolError = async (op: Promise<unknown>, uri: string, cause: RegExp) => {
    const err = await op.then(
      () => assert.fail('expected an NvueError'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof NvueError, String((err as Error)?.stack ?? err));
    assert.equal(err.kind, 'Protocol');
    assert.equal(err.uri, uri);
    assert.match(err.message, new RegExp(`sw-9 GET ${uri}: `));
    assert.match(err.causeText, cause);
  };

  it('an empty 200 for /system/version is Protocol, not a TypeError', async () => {
    const c = await clientOf((res) => res.end());
    await protocolError(getVersion(c), '/nvue_v1/system/version', /HTTP 200 with an empty body/);
  });

  it('a list or a truncated document where an object belongs is Protocol', async () => {
    const list = await clientOf((res) => json(res, 200, ['BMC']));
    await protocolError(getPlatformFirmware(list), '/nvue_v1/platform/firmware', /JSON array/);
    const cut = await clientOf((res) => res.end('{"valid-to": "20'));
    await protocolError(getCertificate(cut, 'site'), '/nvue_v1/system/security/certificate/site', /not JSON/);
  });

  it('image files listed with null or nameless entries keep only the names', async () => {
    const c = await clientOf((res) => json(res, 200, [null, { name: 5 }, 'b.bin', { name: 'a.bin' }]));
    assert.deepEqual(await listImageFiles(c), ['a.bin', 'b.bin']);
  });

  it('an answer longer than maxResponseBytes is refused, not buffered', async () => {
    const c = await clientOf((res) => json(res, 200, { image: 'x'.repeat(4096) }), 1024);
    await protocolError(getVersion(c), '/nvue_v1/system/version', /longer than 1024 bytes/);
  });
});
