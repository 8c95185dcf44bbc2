import { createReadStream, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { ArtifactCache } from '../../apps/satellite/src/artifacts/artifact-cache.js';

/**
 * The firmware path of a real hub: stream `file` up (POST /v1/firmware/packages), then fetch it
 * by digest into a fresh satellite artifact cache (sha256-verified). Returns both rates.
 */
export async function measureArtifactPath(
  hubUrl: string,
  tokens: { operator: string; viewer: string },
  file: string,
  cacheDir: string,
): Promise<{ uploadMibPerS: number; fetchMibPerS: number }> {
  const size = (await stat(file)).size;
  const mib = size / 2 ** 20;
  let started = Date.now();
  const res = await fetch(`${hubUrl}/v1/firmware/packages?file_name=bench.fwpkg`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${tokens.operator}`,
      'content-type': 'application/octet-stream',
      'content-length': String(size),
    },
    body: createReadStream(file) as unknown as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const pkg = (await res.json()) as { digest: string };
  if (res.status !== 201 && res.status !== 200) throw new Error(`upload: HTTP ${res.status} ${JSON.stringify(pkg)}`);
  const uploadS = (Date.now() - started) / 1000;

  const cache = new ArtifactCache({
    dir: cacheDir,
    maxBytes: 4 * size,
    hub: { url: hubUrl, token: async () => tokens.viewer },
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
