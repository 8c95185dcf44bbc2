import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultNvosTimings, type SshLogged } from '@fleet/simulators';
import { uploadPackage } from '../test/harness/firmware.js';
import { Stack } from '../test/harness/stack.js';
import { nvosInstall } from '../test/harness/switches.js';
import { prepareStackBench } from './lib/environment.js';
import { loopbackCopyMibPerS } from './lib/loopback-copy.js';

const MIB = 2 ** 20;
const FILE = 'nvos-amd64-25.06.1000.bin';

/**
 * NVOS installs at rack-row scale through the whole stack: N simulated switches (default 100)
 * each get a job at once; each job fetches the image into the satellite cache (one shared
 * download), uploads it over SFTP, installs it and waits out the reboot. Real NVOS images are
 * about a gigabyte; the default 64 MiB keeps the 100 uploads (6.4 GiB through SSH on both
 * ends) within a few minutes on 2 cores while still being transfer-bound.
 *
 * Figures: the makespan from the first request to the last job's end; its floor, i.e. all the
 * bytes at the raw loopback rate followed by one simulated install, handoff and reboot (no
 * concurrency cap applies below the satellite's 200 concurrent activities); the aggregate SFTP
 * rate the simulator saw (first open to last close) and the floor at that rate; the same bytes
 * over plain loopback TCP, and the SFTP rate as a fraction of it (bench/sftp.ts measures one
 * upload alone).
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const switches = Number(args[0] ?? 100);
  const imageMib = Number(args[1] ?? 64);
  const cleanup = await prepareStackBench('switch');
  // 300 s install → 3 s, 5 s handoff → 0.05 s, 120 s reboot → 1.2 s.
  const timeScale = 0.01;
  const stack = new Stack({
    // Measured as the trivial-workflow baseline runs: no codec; no leak scan of thousands of histories at the end.
    payloadEncryption: false,
    leakScan: false,
    // Many concurrent pollers share one token: the bench measures the stack, not the rate limit.
    rateLimit: { enabled: false },
    bmcs: 0,
    switches,
    timeScale,
    projectionIntervalMs: 500,
    power: { heartbeatTimeoutS: 30 },
    nvosInstall: { pollIntervalS: 0.25, installTimeoutS: 600, rebootTimeoutS: 600 },
  });
  const imageFile = join(tmpdir(), `fleet-bench-${process.pid}-${FILE}`);
  await stack.start();
  try {
    const image = randomBytes(imageMib * MIB);
    writeFileSync(imageFile, image);
    const pkg = await uploadPackage(stack, image, FILE, 'nvos');

    const started = Date.now();
    const jobIds = await Promise.all(stack.switches.map((sw) => nvosInstall(stack, sw.id, pkg.id)));
    const jobs = [];
    for (const id of jobIds)
      jobs.push((await stack.waitForJob(id, 3_600_000)) as { state: string; finished_at: string; error?: unknown });
    const failed = jobs.filter((j) => j.state !== 'succeeded');
    if (failed.length)
      throw new Error(`${failed.length} of ${switches} installs failed, e.g. ${JSON.stringify(failed[0]!.error)}`);
    const makespan = (Math.max(...jobs.map((j) => Date.parse(j.finished_at))) - started) / 1000;

    const uploads = await sftpWindow(stack);
    const rawMibPerS = await loopbackCopyMibPerS(imageFile, switches);
    const { installS, handoffS, rebootS } = defaultNvosTimings;
    const installRebootS = (installS + handoffS + rebootS) * timeScale;
    const sftpMibPerS = uploads.bytes / MIB / uploads.seconds;
    const lowerBound = (switches * imageMib) / rawMibPerS + installRebootS;
    return {
      switches,
      image_mib: imageMib,
      nvos_install_makespan_s: Number(makespan.toFixed(1)),
      lower_bound_s: Number(lowerBound.toFixed(1)),
      makespan_over_lower_bound: Number((makespan / lowerBound).toFixed(2)),
      simulated_install_reboot_s: installRebootS,
      // The same floor at the SFTP rate achieved: what is left above it is orchestration.
      sftp_bound_s: Number(((switches * imageMib) / sftpMibPerS + installRebootS).toFixed(1)),
      sftp_mib_per_s: Number(sftpMibPerS.toFixed(1)),
      raw_loopback_copy_mib_per_s: rawMibPerS,
      sftp_over_raw_loopback: Number((sftpMibPerS / rawMibPerS).toFixed(2)),
    };
  } finally {
    rmSync(imageFile, { force: true });
    await stack.stop();
    await cleanup();
  }
}

/** Image bytes the switches received over SFTP, and the span from the first open to the last close. */
async function sftpWindow(stack: Stack): Promise<{ bytes: number; seconds: number }> {
  let bytes = 0;
  let first = Infinity;
  let last = 0;
  for (const sw of stack.switches) {
    const { items } = (await (await fetch(`${stack.simAdminUrl}/switches/${sw.id}/ssh-requests`)).json()) as {
      items: SshLogged[];
    };
    for (const r of items.filter((x) => x.path === `/host/nos-images/${FILE}`)) {
      if (r.op === 'sftp-open') first = Math.min(first, Date.parse(r.at));
      if (r.op === 'sftp-close') {
        last = Math.max(last, Date.parse(r.at));
        bytes += r.bytes ?? 0;
      }
    }
  }
  return { bytes, seconds: (last - first) / 1000 };
}
