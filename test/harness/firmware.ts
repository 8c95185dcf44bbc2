import { octetStream, unwrap, type FirmwarePackage, type paths } from '@fleet/client';
import { buildFwpkg } from '@fleet/fwpkg';
import { profilePackageSpec, profileParts, type ProfileId } from '@fleet/simulators';
import type { Stack } from './stack.js';

type NewManifest = paths['/v1/firmware/manifests']['post']['requestBody']['content']['application/json'];

/**
 * Uploads a package (a PLDM package, or an NVOS image with format `nvos`) through the hub, the way an operator's client
 * streams it.
 */
export async function uploadPackage(
  stack: Stack,
  bytes: Buffer,
  fileName: string,
  format: 'pldm' | 'nvos' = 'pldm',
): Promise<FirmwarePackage> {
  return unwrap(
    stack.client('operator').POST('/v1/firmware/packages', {
      params: { query: { file_name: fileName, format } },
      body: bytes,
      ...octetStream,
    }),
  );
}

/**
 * Packages for every updatable part of a simulator profile at `version` (BMC tray first), and
 * the manifest that pushes them in that order. Returns the manifest id and the component ids.
 */
export async function manifestFor(
  stack: Stack,
  profile: ProfileId,
  hardwareType: NewManifest['hardware_type'],
  version: string,
  opts: { name?: string; isDefault?: boolean } = {},
): Promise<{ manifestId: string; components: string[] }> {
  const steps: NewManifest['steps'] = [];
  for (const [i, part] of profileParts(profile).entries()) {
    const pkg = await uploadPackage(
      stack,
      buildFwpkg(profilePackageSpec(profile, part, version)),
      `${profile}-part${i}-${version}.fwpkg`,
    );
    steps.push({
      name: `part${i}`,
      package_id: pkg.id,
      targets: [],
      components: part.components.map((id) => ({ id, version })),
    });
  }
  const manifest = await unwrap(
    stack.client('operator').POST('/v1/firmware/manifests', {
      body: {
        name: opts.name ?? `${profile}-${version}`,
        hardware_type: hardwareType,
        steps,
        default: opts.isDefault ?? false,
      },
    }),
  );
  return {
    manifestId: manifest.id,
    components: steps.flatMap((s) => s.components.map((c) => c.id)),
  };
}

/** One image the simulated BMC flashed (its flash log entry). */
export interface Flash {
  id: string;
  version: string;
  filename: string;
}

/** Every image the simulated BMC actually flashed (its flash log). */
export async function flashes(stack: Stack, bmcId: string): Promise<Flash[]> {
  const body = (await (await fetch(`${stack.simAdminUrlOf(bmcId)}/bmcs/${bmcId}/firmware`)).json()) as {
    flashes: Flash[];
  };
  return body.flashes;
}

export async function installed(stack: Stack, bmcId: string): Promise<Map<string, string>> {
  const body = (await (await fetch(`${stack.simAdminUrlOf(bmcId)}/bmcs/${bmcId}/firmware`)).json()) as {
    items: { id: string; version: string }[];
  };
  return new Map(body.items.map((i) => [i.id, i.version]));
}

export async function setFaults(stack: Stack, bmcId: string, faults: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${stack.simAdminUrlOf(bmcId)}/bmcs/${bmcId}/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(faults),
  });
  if (!res.ok) throw new Error(`faults for ${bmcId}: HTTP ${res.status}`);
}

/** Asserts no component of a BMC was flashed more than once. */
export function duplicates(list: Flash[]): string[] {
  const seen = new Map<string, number>();
  for (const f of list) seen.set(`${f.id}@${f.version}`, (seen.get(`${f.id}@${f.version}`) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`);
}

export async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
