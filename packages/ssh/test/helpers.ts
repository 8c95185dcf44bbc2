import { startNvosSimulator, type NvosSimulator, type SwitchSpec } from '@fleet/simulators';
import { connect, type SshConnectOptions, type SshSession } from '../src/index.js';

export const USER = 'admin';
export const PASSWORD = 'ssh-Secret-42';

export function startSim(switches: (Partial<SwitchSpec> & { id: string })[]): Promise<NvosSimulator> {
  return startNvosSimulator({
    switches: switches.map((s) => ({
      address: '127.0.0.1',
      nvuePort: 0,
      sshPort: 0,
      username: USER,
      password: PASSWORD,
      nvosVersion: '25.02.4282',
      ...s,
    })),
    timeScale: 0.001,
    timings: { rebootS: 200, handoffS: 50 },
  });
}

/** A session to switch `id`, pinned to its host key unless told otherwise. */
export function open(sim: NvosSimulator, id: string, opts: Partial<SshConnectOptions> = {}): Promise<SshSession> {
  return connect({
    ...sim.ssh(id),
    device: id,
    username: USER,
    password: PASSWORD,
    hostKey: { mode: 'pinned', sha256: sim.switch(id).hostKey.sha256 },
    connectTimeoutMs: 5_000,
    ...opts,
  });
}

/** Sets a user's password through NVUE, as the control plane does (revision, apply, save). */
export async function rotatePassword(sim: NvosSimulator, id: string, password: string): Promise<void> {
  const base = `${sim.nvueUrl(id)}/nvue_v1`;
  const call = async (method: string, path: string, body: unknown, auth = PASSWORD) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`${USER}:${auth}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    });
    return res.json() as Promise<unknown>;
  };
  const rev = (await call('POST', '/revision', {})) as string;
  await call('PATCH', `/system/aaa/user/${USER}?rev=${rev}`, { password: Buffer.from(password).toString('base64') });
  await call('PATCH', `/revision/${rev}`, { state: 'apply', 'auto-prompt': { ays: 'ays_yes' } });
  while (sim.switch(id).revisions.get(rev)?.state !== 'applied') await new Promise((r) => setTimeout(r, 5));
}
