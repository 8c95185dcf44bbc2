import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeParse, sha256MibPerS, writeBenchPackage, type ParseProbe } from './lib/fwpkg-parse.js';

const runs = 3;

/**
 * The PLDM package parser (`inspectFwpkgFile`: header, payload CRC, SHA-256 of the package and of
 * each image) on a 1 GiB package against a plain streamed SHA-256 of the same file in the same run:
 * the parser should cost little more than the one hash the hub needs anyway. Each parse runs in a
 * fresh process, so its peak RSS is its own; hash and parse alternate, so load from elsewhere on
 * the machine falls on both. `pnpm bench fwpkg [MiB]`.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const mib = Number(args[0] ?? 1024);
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-fwpkg-'));
  const path = join(dir, 'bench.fwpkg');
  try {
    const { size, sha256 } = await writeBenchPackage(path, mib * 2 ** 20);
    // Written back to disk before timing, so the kernel's writeback does not run during the measurements.
    const fd = openSync(path, 'r');
    fsyncSync(fd);
    closeSync(fd);
    // Both read the file from the page cache; one untimed pass makes sure it is all there.
    await sha256MibPerS(path);
    const sha: number[] = [];
    const parse: ParseProbe[] = [];
    for (let i = 0; i < runs; i++) {
      sha.push(await sha256MibPerS(path));
      const probe = probeParse(path);
      if (probe.sha256 !== sha256) throw new Error(`the parse gave sha256 ${probe.sha256}, the package is ${sha256}`);
      parse.push(probe);
    }
    const shaBest = Math.max(...sha);
    const parseBest = Math.max(...parse.map((p) => p.mibPerS));
    return {
      package_mib: Number((size / 2 ** 20).toFixed(0)),
      sha256_mib_per_s: round(shaBest, 1),
      fwpkg_parse_mib_per_s: round(parseBest, 1),
      parse_over_sha256: round(parseBest / shaBest, 3),
      fwpkg_parse_peak_rss_mib: round(Math.max(...parse.map((p) => p.peakRssMib)), 1),
      fwpkg_parse_baseline_rss_mib: round(Math.max(...parse.map((p) => p.baselineRssMib)), 1),
      sha256_runs_mib_per_s: sha.map((s) => round(s, 1)),
      fwpkg_parse_runs_mib_per_s: parse.map((p) => p.mibPerS),
      statistic: `best of ${runs}`,
      load_avg_1m: round(loadavg()[0]!, 2),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (n: number, digits = 3) => Number(n.toFixed(digits));
