import { unwrap } from '@fleet/client';
import type { Stack } from './stack.js';

/** A simulated switch's state as the simulator's admin API shows it. */
export interface SwitchState {
  rebooting: boolean;
  nvueUp: boolean;
  image: { current: string; next: string };
  counters: { reboots: number; installsStarted: number };
}

export interface SwitchFile {
  path: string;
  size: number;
  sha256?: string;
  uploads: number;
  bytesReceived: number;
}

async function admin<T>(stack: Stack, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.simAdminUrl}/switches/${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} /switches/${path}: HTTP ${res.status}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export const switchState = (stack: Stack, id: string) => admin<SwitchState>(stack, 'GET', id);

/** The file under /host/nos-images, if the switch holds it. */
export async function stagedFile(stack: Stack, id: string, fileName: string): Promise<SwitchFile | undefined> {
  const { items } = await admin<{ items: SwitchFile[] }>(stack, 'GET', `${id}/files`);
  return items.find((f) => f.path === `/host/nos-images/${fileName}`);
}

/** Replaces the switch's faults ({} clears them). */
export async function setSwitchFaults(stack: Stack, id: string, faults: Record<string, unknown>): Promise<void> {
  await admin(stack, 'PUT', `${id}/faults`, faults);
}

/** Starts an NVOS install job on the switch; returns the job id. */
export async function nvosInstall(stack: Stack, id: string, packageId: string): Promise<string> {
  const job = await unwrap(
    stack.client('operator').POST('/v1/devices/{id}/nvos-install', {
      params: { path: { id: stack.deviceIds.get(id)! } },
      body: { package_id: packageId },
    }),
  );
  return job.id;
}
