import { createReadStream, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { octetStream, unwrap } from '@fleet/client';
import { ArtifactCache } from '@fleet/satellite';
import type { Stack } from '../../test/harness/stack.js';

/**
 * The firmware path of a real hub: stream `file` up (POST /v1/firmware/packages), then fetch it
 * by digest into a fresh satellite artifact cache (sha256-verified). Returns both rates.
 */
export async function measureArtifactPath(
  stack: Stack,
  file: string,
  cacheDir: string,
): Promise<{ uploadMibPerS: number; fetchMibPerS: number }> {
  const size = (await stat(file)).size;
  const mib = size / 2 ** 20;
  let started = Date.now();
  const pkg = await unwrap(
    stack.client('operator').POST('/v1/firmware/packages', {
      params: { query: { file_name: 'bench.fwpkg' } },
      body: Readable.toWeb(createReadStream(file)),
      ...octetStream,
      headers: { ...octetStream.headers, 'content-length': String(size) },
      duplex: 'half',
    }),
  );
  const uploadS = (Date.now() - started) / 1000;

  const cache = new ArtifactCache({
    dir: cacheDir,
    maxBytes: 4 * size,
    hub: { url: stack.hubUrl, token: async () => stack.tokens.viewer },
    log: pino({ level: 'silent' }),
  });
  try {
    started = Date.now();
    await cache.ensure(pkg.digest, size);
    const fetchS = (Date.now() - started) / 1000;
    return { uploadMibPerS: Number((mib / uploadS).toFixed(1)), fetchMibPerS: Number((mib / fetchS).toFixed(1)) };
  } finally {
    await cache.close();
    rmSync(join(cacheDir), { recursive: true, force: true });
  }
}
