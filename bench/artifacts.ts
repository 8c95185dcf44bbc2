import { measureArtifactTransfer } from './lib/artifact-transfer.js';

/**
 * The firmware package's way in and out of the hub: upload into the catalog and a satellite's fetch into its
 * cache, against a plain loopback TCP copy of the same bytes in the same run. `pnpm bench artifacts [MiB] [runs]`
 * (1 GiB and 3 rounds by default).
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const mib = Number(args[0] ?? 1024);
  const runs = Number(args[1] ?? 3);
  if (!(mib > 0) || !Number.isInteger(runs) || runs < 1) throw new Error('usage: pnpm bench artifacts [MiB] [runs]');
  return { ...(await measureArtifactTransfer({ bytes: Math.round(mib * 2 ** 20), runs })) };
}
