import { randomInt, randomUUID } from 'node:crypto';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import type { BmcTarget, NodeType } from '@fleet/domain';
import { startRedfishSimulator, type BmcSpec, type ProfileId, type RedfishSimulator } from '@fleet/simulators';
import { createDeviceActivities } from '../../src/activities/index.js';
import { UnknownCredentialError, type SecretStore } from '../../src/secrets/index.js';
import { openTestJournal } from './journal.js';

const testJournal = await openTestJournal();

export const secrets: SecretStore = {
  resolve: async (ref) => {
    if (ref === 'bmc/good') return { username: 'admin', password: 'sekret' };
    throw new UnknownCredentialError(ref);
  },
};

export const activities = createDeviceActivities({
  secrets,
  log: pino({ level: 'silent' }),
  pollIntervalMs: 20,
  journal: testJournal,
  redfish: { connectTimeoutMs: 500, requestTimeoutMs: 2_000 },
});
export type Activities = typeof activities;

const profileFor: Record<string, ProfileId> = {
  compute_gb200_nvidia: 'gb200-compute',
  compute_gb300_nvidia: 'gb300-compute',
  switch_gb200_nvidia: 'nvswitch-tray',
  powershelf_gb200_liteon: 'powershelf-liteon',
  powershelf_gb300_delta: 'powershelf-delta',
};

export interface Bench {
  sim: RedfishSimulator;
  target(id: string, credentialRef?: string, redfishSystemId?: string): BmcTarget;
  posts(id: string, pathEnd?: string): { path: string; body?: unknown }[];
  close(): Promise<void>;
}

/**
 * A simulated site with the given devices (id → node type) on a random loopback block, at
 * 1/100 speed: power-on 0.3 s, graceful shutdown 0.2 s, BMC reboot 1.2 s. Devices of one
 * power domain lose AC while none of its shelves is on.
 */
export async function startBench(
  devices: Record<
    string,
    { nodeType: NodeType; powerState?: 'On' | 'Off'; powerDomain?: string; quirks?: BmcSpec['quirks'] }
  >,
): Promise<Bench> {
  const block = `127.${randomInt(2, 250)}.${randomInt(0, 250)}`;
  const port = 20_000 + randomInt(0, 20_000);
  const entries = Object.entries(devices);
  const sim = await startRedfishSimulator({
    bmcs: entries.map(([id, d], i) => ({
      id,
      profile: profileFor[d.nodeType]!,
      address: `${block}.${i + 1}`,
      port,
      username: 'admin',
      password: 'sekret',
      ...(d.powerState ? { powerState: d.powerState } : {}),
      ...(d.powerDomain ? { powerDomain: d.powerDomain } : {}),
      ...(d.quirks ? { quirks: d.quirks } : {}),
    })),
    timeScale: 0.01,
  });
  return {
    sim,
    target: (id, credentialRef = 'bmc/good', redfishSystemId) => ({
      deviceId: `dev-${id}`,
      nodeType: devices[id]!.nodeType,
      bmcUrl: sim.bmcUrl(id),
      credentialRef,
      ...(redfishSystemId ? { redfishSystemId } : {}),
    }),
    posts: (id, pathEnd = '') => sim.bmc(id).log.filter((r) => r.method === 'POST' && r.path.endsWith(pathEnd)),
    close: () => sim.close(),
  };
}

const quiet: Logger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** An activity environment that keeps the SDK's per-attempt failure logs out of the test output. */
/**
 * An environment that is an activity of its own (a workflow run of its own) unless `info` names one: the action journal
 * tells activities apart by workflow run and activity id, which MockActivityEnvironment gives all the same.
 */
export function mockEnv(info?: ConstructorParameters<typeof MockActivityEnvironment>[0]): MockActivityEnvironment {
  const run = { workflowType: 'test', workflowExecution: { workflowId: `wf-${randomUUID()}`, runId: randomUUID() } };
  return new MockActivityEnvironment({ ...run, ...info }, { logger: quiet });
}

/** Runs one activity in a MockActivityEnvironment. */
export function runActivity<K extends keyof Activities>(
  env: MockActivityEnvironment,
  name: K,
  input: Parameters<Activities[K]>[0],
): ReturnType<Activities[K]> {
  const fn = activities[name] as (i: typeof input) => ReturnType<Activities[K]>;
  return env.run(fn, input) as ReturnType<Activities[K]>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
