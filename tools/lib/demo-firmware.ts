import { buildFwpkg } from '@fleet/fwpkg';
import { profilePackageSpec, profileParts } from '@fleet/simulators';

const NAME = 'gb200-compute-demo';
const VERSION = '25.12.0';
/** An NVOS build newer than the simulated switches run (25.02.4282). */
const NVOS_IMAGE = 'nvos-amd64-25.06.1000.bin';

/**
 * The demo's firmware catalog, created once through the hub API: packages for the simulated
 * GB200 compute trays (BMC tray and compute tray), a default manifest that uses them, and an
 * NVOS image for the switch trays.
 */
export async function seedFirmware(
  hub: string,
  tokens: Record<string, string>,
): Promise<{ manifest: string; nvosImageId: string }> {
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${hub}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tokens['operator']}`,
        ...(body === undefined ? {} : { 'content-type': contentType }),
      },
      ...(body === undefined ? {} : { body: body instanceof Buffer ? body : JSON.stringify(body) }),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  // The same bytes uploaded again are the same package, so this needs no existence check.
  const image = Buffer.alloc(8 << 20, NVOS_IMAGE);
  const nvosImageId = (
    await call('POST', `/v1/firmware/packages?file_name=${NVOS_IMAGE}&format=nvos`, image, 'application/octet-stream')
  )['id'] as string;
  const existing = (await call('GET', `/v1/firmware/manifests?limit=1000`)) as { items: { name: string }[] };
  if (existing.items.some((m) => m.name === NAME)) return { manifest: NAME, nvosImageId };
  const steps = [];
  for (const [i, part] of profileParts('gb200-compute').entries()) {
    const file = `nvfw_GB200-${i === 0 ? 'P4972' : 'P4975'}_${VERSION}.fwpkg`;
    const pkg = await call(
      'POST',
      `/v1/firmware/packages?file_name=${file}`,
      buildFwpkg(profilePackageSpec('gb200-compute', part, VERSION)),
      'application/octet-stream',
    );
    steps.push({
      name: i === 0 ? 'bmc_tray' : 'compute_tray',
      package_id: pkg['id'],
      targets: [],
      components: part.components.map((id) => ({ id, version: VERSION })),
    });
  }
  await call('POST', '/v1/firmware/manifests', {
    name: NAME,
    hardware_type: 'compute_gb200_nvidia',
    steps,
    default: true,
  });
  return { manifest: NAME, nvosImageId };
}
