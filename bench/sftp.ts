import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startNvosSimulator } from '@fleet/simulators';
import { connect } from '../packages/ssh/src/index.js';
import { loopbackCopyMibPerS } from './lib/loopback-copy.js';

const MIB = 2 ** 20;
const REMOTE = '/host/nos-images/nvos-amd64-bench.bin';
const USER = 'admin';
const PASSWORD = 'bench-Secret-1';

/**
 * One NVOS image upload through packages/ssh to a simulated switch in its own process (as in
 * the stack, so client and switch can each have a core), against the raw loopback TCP copy of
 * the same bytes to another process in the same run. The switch's SHA-256 of what it received
 * must match the file.
 *
 * Args: image MiB (default 256); rounds (default 3, each a raw copy then an upload, the best of
 * each counting); optionally the upload's chunk KiB and writes in flight (packages/ssh defaults
 * otherwise: one SSH packet per write, the SSH window in flight; the simulated switch states no
 * write limit, so 32 KiB is the most). SFTP_BENCH_CPU_PROF=<dir> writes a CPU profile of the
 * switch process; run the bench as `tsx --cpu-prof bench/run.ts sftp` for the client's.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const imageMib = Number(args[0] ?? 256);
  const repeats = Number(args[1] ?? 3);
  const upload = {
    ...(args[2] ? { chunkSize: Number(args[2]) * 1024 } : {}),
    ...(args[3] ? { concurrency: Number(args[3]) } : {}),
  };
  const file = join(tmpdir(), `fleet-bench-sftp-${process.pid}.bin`);
  const sim = startSimProcess();
  try {
    const digest = await writeImage(file, imageMib * MIB);
    const { port, sha256 } = await sim.next();
    const session = await connect({
      host: '127.0.0.1',
      port: port as number,
      device: 'sw-bench',
      username: USER,
      password: PASSWORD,
      hostKey: { mode: 'pinned', sha256: sha256 as string },
    });
    const cipher = session.cipher;
    let best = 0;
    let raw = 0;
    const cpu = { client: Infinity, sw: Infinity };
    try {
      // Rounds alternate the two copies so that load from elsewhere on the machine hits both alike.
      for (let i = 0; i < repeats; i++) {
        raw = Math.max(raw, await loopbackCopyMibPerS(file, 1));
        sim.send({ cpu: true });
        const swBefore = (await sim.next()).cpuUs as number;
        const clientBefore = process.cpuUsage();
        const started = process.hrtime.bigint();
        await session.upload(file, REMOTE, upload);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const clientUs = process.cpuUsage(clientBefore);
        best = Math.max(best, imageMib / seconds);
        sim.send({ stat: REMOTE });
        const remote = await sim.next();
        if (remote.size !== imageMib * MIB || remote.sha256 !== digest)
          throw new Error(`the switch holds ${JSON.stringify(remote)}, expected ${imageMib * MIB} bytes ${digest}`);
        cpu.client = Math.min(cpu.client, (clientUs.user + clientUs.system) / 1000 / imageMib);
        cpu.sw = Math.min(cpu.sw, ((remote.cpuUs as number) - swBefore) / 1000 / imageMib);
      }
    } finally {
      session.close();
    }
    return {
      image_mib: imageMib,
      sftp_mib_per_s: Number(best.toFixed(1)),
      raw_loopback_copy_mib_per_s: raw,
      sftp_over_raw_loopback: Number((best / raw).toFixed(2)),
      cipher,
      // CPU per MiB uploaded on each end: less at the mercy of other load than the rates.
      client_cpu_ms_per_mib: Number(cpu.client.toFixed(2)),
      switch_cpu_ms_per_mib: Number(cpu.sw.toFixed(2)),
    };
  } finally {
    sim.stop();
    rmSync(file, { force: true });
  }
}

async function writeImage(file: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  for (let left = bytes; left > 0; left -= 4 * MIB) {
    const chunk = randomBytes(Math.min(left, 4 * MIB));
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return hash.digest('hex');
}

type Message = Record<string, unknown>;

/** This file run as the switch: JSON lines out (port, then answers), `{stat}`/`{cpu}` requests in. */
function startSimProcess() {
  const prof = process.env.SFTP_BENCH_CPU_PROF;
  const child = spawn(
    process.execPath,
    [...process.execArgv, ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), fileURLToPath(import.meta.url)],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, SFTP_BENCH_SIMULATOR: '1' } },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async next(): Promise<Message> {
      for (;;) {
        const { value, done } = await lines.next();
        if (done) throw new Error('the simulator process exited');
        // Node diagnostics (--trace-gc and the like) share the pipe.
        if ((value as string).startsWith('{')) return JSON.parse(value as string) as Message;
      }
    },
    send: (msg: Message) => child.stdin.write(`${JSON.stringify(msg)}\n`),
    // SIGINT lets --cpu-prof write its profile; stdin closing ends the child otherwise.
    stop: () => (prof ? child.kill('SIGINT') : child.stdin.end()),
  };
}

async function serveSwitch(): Promise<void> {
  const sim = await startNvosSimulator({
    switches: [
      {
        id: 'sw-bench',
        address: '127.0.0.1',
        nvuePort: 0,
        sshPort: 0,
        username: USER,
        password: PASSWORD,
        nvosVersion: '25.02.4282',
      },
    ],
  });
  const sw = sim.switch('sw-bench');
  const say = (msg: Message) => process.stdout.write(`${JSON.stringify(msg)}\n`);
  say({ port: sim.ssh('sw-bench').port, sha256: sw.hostKey.sha256 });
  const stop = () => void sim.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  const input = createInterface({ input: process.stdin });
  input.on('line', (line) => {
    const { stat } = JSON.parse(line) as { stat?: string };
    const { user, system } = process.cpuUsage();
    const f = stat === undefined ? undefined : sw.fs.file(stat);
    say({ size: f?.size, sha256: f?.sha256, cpuUs: user + system });
  });
  input.once('close', stop);
}

if (process.env.SFTP_BENCH_SIMULATOR && import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await serveSwitch();
