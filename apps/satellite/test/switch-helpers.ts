import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import type { NvosTarget, SwitchFirmwareComponent, SwitchFirmwareStep } from '@fleet/domain';
import { getSystem, NvueClient, NvueError } from '@fleet/nvue';
import { connect, SshError } from '@fleet/ssh';
import { startNvosSimulator, type NvosSimulator, type NvosTimings, type SwitchSpec } from '@fleet/simulators';
import { ArtifactCache } from '../src/artifacts/artifact-cache.js';
import { SatelliteConfig } from '../src/config.js';
import type { NvosAccess } from '../src/nvos/connect.js';
import { KnownHosts } from '../src/nvos/known-hosts.js';
import { createFileSecretStore } from '../src/secrets/file-store.js';
import { PendingPasswords } from '../src/credentials/pending-passwords.js';
import { createSecretWriter } from '../src/credentials/secret-writer.js';

export const USER = 'admin';

export interface SwitchBench {
  sim: NvosSimulator;
  dir: string;
  secretsFile: string;
  /**
   * The satellite's access to the switches: file secret store, TOFU host keys, short NVUE/SSH timeouts, captured logs.
   */
  access: NvosAccess;
  secretWriter: ReturnType<typeof createSecretWriter>;
  /** The site cache, without a hub: it serves what `firmwareStep` put in it before its first use. */
  artifacts: ArtifactCache;
  pendingPasswords: PendingPasswords;
  /** Every log line the satellite wrote, as JSON text. */
  logs: string[];
  target(id: string): NvosTarget;
  /** A package of `size` random bytes in the cache, as the step installing `version` of `component`. */
  firmwareStep(component: SwitchFirmwareComponent, version: string, size?: number): SwitchFirmwareStep;
  /** The secret store file as it is on disk now. */
  secrets(): Record<string, { username: string; password: string }>;
  close(): Promise<void>;
}

/**
 * Simulated switches (1/1000 speed unless timings say otherwise) and a satellite's switch
 * dependencies around them; each switch's credentials are in the secret file under `switch/<id>`.
 */
export async function startSwitchBench(
  switches: (Partial<SwitchSpec> & { id: string; password: string })[],
  opts: { timings?: Partial<NvosTimings>; sftpStepTimeoutS?: number } = {},
): Promise<SwitchBench> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-switch-'));
  const secretsFile = join(dir, 'secrets.json');
  writeFileSync(
    secretsFile,
    JSON.stringify(
      Object.fromEntries(switches.map((s) => [`switch/${s.id}`, { username: USER, password: s.password }])),
    ),
    { mode: 0o600 },
  );
  const sim = await startNvosSimulator({
    switches: switches.map((s) => ({
      address: '127.0.0.1',
      nvuePort: 0,
      sshPort: 0,
      username: USER,
      nvosVersion: '25.02.4282',
      ...s,
    })),
    timeScale: 0.001,
    ...(opts.timings ? { timings: opts.timings } : {}),
  });
  // The cache indexes its folder on first use: packages go in before that.
  const cacheDir = join(dir, 'artifacts');
  mkdirSync(cacheDir);
  const artifacts = new ArtifactCache({ dir: cacheDir, maxBytes: 1 << 30, log: pino({ level: 'silent' }) });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const nvos = SatelliteConfig.shape.nvos.parse({
    connectTimeoutMs: 1_000,
    requestTimeoutMs: 2_000,
    sftpStepTimeoutS: opts.sftpStepTimeoutS ?? 5,
  });
  const access: NvosAccess = {
    secrets: createFileSecretStore(secretsFile),
    knownHosts: new KnownHosts(join(dir, 'known-hosts.json')),
    nvos,
    log: pino({ level: 'debug' }, sink),
  };
  return {
    sim,
    dir,
    secretsFile,
    access,
    secretWriter: createSecretWriter({ provider: 'file', path: secretsFile }),
    artifacts,
    pendingPasswords: new PendingPasswords(join(dir, 'pending-passwords.json')),
    logs,
    target: (id) => ({
      deviceId: `dev-${id}`,
      nvueUrl: sim.nvueUrl(id),
      ssh: sim.ssh(id),
      credentialRef: `switch/${id}`,
    }),
    firmwareStep: (component, version, size = 64 * 1024) => {
      const bytes = randomBytes(size);
      const digest = createHash('sha256').update(bytes).digest('hex');
      writeFileSync(join(cacheDir, digest), bytes);
      const fileName = `nvfw-${component}-${version}.bin`;
      return {
        name: component,
        targets: [],
        components: [{ id: component, version }],
        packageDigest: digest,
        packageSize: size,
        fileName,
      };
    },
    secrets: () =>
      JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, { username: string; password: string }>,
    close: async () => {
      await artifacts.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** NVUE requests a switch received, as `METHOD path` lines with the (masked) body. */
export function nvueLines(sim: NvosSimulator, id: string): { line: string; status: number; body?: unknown }[] {
  return sim.switch(id).nvueRequests.map((r) => ({
    line: `${r.method} ${r.path}`,
    status: r.status,
    ...(r.body === undefined ? {} : { body: r.body }),
  }));
}

/** Runs one activity function in a mock environment, keeping its result type. */
export function runIn<I, O>(env: MockActivityEnvironment, fn: (input: I) => Promise<O>, input: I): Promise<O> {
  return env.run(fn, input) as Promise<O>;
}

/** Whether the switch's NVUE API and its SSH server take `password` for the admin user. */
export async function logsIn(
  bench: SwitchBench,
  id: string,
  password: string,
): Promise<{ nvue: boolean; ssh: boolean }> {
  const c = new NvueClient({
    baseUrl: bench.sim.nvueUrl(id),
    credentials: { username: USER, password },
    maxAttempts: 1,
  });
  const nvue = await getSystem(c)
    .then(() => true)
    .catch((err: unknown) => {
      if (err instanceof NvueError && err.kind === 'Unauthenticated') return false;
      throw err;
    })
    .finally(() => c.close());
  const { host, port } = bench.sim.ssh(id);
  const ssh = await connect({
    host,
    port,
    username: USER,
    password,
    hostKey: { mode: 'pinned', sha256: bench.sim.switch(id).hostKey.sha256 },
  })
    .then((session) => {
      session.close();
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof SshError && err.kind === 'Auth') return false;
      throw err;
    });
  return { nvue, ssh };
}
