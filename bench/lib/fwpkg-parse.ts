import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { inspectFwpkgFile, writeFwpkgFile } from '@fleet/fwpkg';

/** Figures of one parse, measured in a process of its own so peak RSS is the parser's. */
export interface ParseProbe {
  mibPerS: number;
  peakRssMib: number;
  baselineRssMib: number;
  /** The package digest the parse computed, to check against the builder's. */
  sha256: string;
}

/** The benches' package: DSP0267 1.3 (so the payload checksum runs too), four equal images. */
export function writeBenchPackage(path: string, bytes = 1024 ** 3): Promise<{ size: number; sha256: string }> {
  return writeFwpkgFile(path, {
    revision: '1.3',
    packageVersion: `bench-${bytes}`,
    devices: [
      {
        descriptors: [{ type: 2, data: '00112233445566778899aabbccddeeff' }],
        applicableComponents: [0, 1, 2, 3],
        imageSetVersion: 'bench',
      },
    ],
    components: [0, 1, 2, 3].map((i) => ({
      classification: 10,
      identifier: i,
      comparisonStamp: 1,
      version: `c${i}`,
      image: { size: Math.floor(bytes / 4), fill: i },
    })),
  });
}

/** `inspectFwpkgFile(path)` in a fresh Node process (this file run as a script). */
export function probeParse(path: string): ParseProbe {
  const probe = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), path], {
    encoding: 'utf8',
  });
  if (probe.status !== 0) throw new Error(`fwpkg parse probe failed: ${probe.stderr}`);
  return JSON.parse(probe.stdout.trim().split('\n').pop()!) as ParseProbe;
}

/** MiB/s of a streamed SHA-256 of the file alone, in `chunk`-byte reads into one reused buffer. */
export async function sha256MibPerS(path: string, chunk = 4 * 1024 * 1024): Promise<number> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunk);
    const hash = createHash('sha256');
    let size = 0;
    const started = process.hrtime.bigint();
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, chunk, size);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
    hash.digest();
    return size / 2 ** 20 / (Number(process.hrtime.bigint() - started) / 1e9);
  } finally {
    await file.close();
  }
}

// Run as a script (`node --import tsx fwpkg-parse.ts <package>`): one parse, its figures as the last line.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = process.argv[2]!;
  const baselineRssMib = process.memoryUsage().rss / 2 ** 20;
  const started = process.hrtime.bigint();
  const result = await inspectFwpkgFile(path);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const figures: ParseProbe = {
    mibPerS: Number((result.size / 2 ** 20 / seconds).toFixed(1)),
    peakRssMib: Number((process.resourceUsage().maxRSS / 1024).toFixed(1)),
    baselineRssMib: Number(baselineRssMib.toFixed(1)),
    sha256: result.sha256,
  };
  console.log(JSON.stringify(figures));
}
