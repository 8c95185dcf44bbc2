import { hardwareOf, kindTable, nodeTypes, vendorTable } from '@fleet/domain';
import { netboxRoleOf, type Fleet, type PlannedDevice } from './layout.js';

/**
 * Writes a planned fleet into NetBox through its REST API, in bulk (a list body
 * creates many objects in one request). Reference objects (manufacturers, roles,
 * device and rack types, custom fields) are created only when missing.
 */
export class NetboxWriter {
  requests = 0;
  private readonly auth: string;

  constructor(
    private readonly baseUrl: string,
    token: string,
    private readonly batch = 250,
  ) {
    this.auth = token.startsWith('nbt_') ? `Bearer ${token}` : `Token ${token}`;
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    this.requests++;
    const res = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: { authorization: this.auth, 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`NetBox ${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async bulk<T extends { id: number }>(method: 'POST' | 'PATCH', path: string, items: unknown[]): Promise<T[]> {
    const out: T[] = [];
    for (let i = 0; i < items.length; i += this.batch)
      out.push(...(await this.call<T[]>(method, path, items.slice(i, i + this.batch))));
    return out;
  }

  /** Finds an object by a filter, or creates it. */
  async ensure(path: string, filter: Record<string, string>, create: Record<string, unknown>): Promise<{ id: number }> {
    const found = await this.call<{ results: { id: number }[] }>('GET', `${path}?${new URLSearchParams(filter)}`);
    if (found.results[0]) return found.results[0];
    return this.call<{ id: number }>('POST', path, create);
  }
}

/** NetBox device types for every node type in the hardware table, slugged as the NetBox agent reads them. */
const deviceTypeSpecs = nodeTypes.map((t) => {
  const hw = hardwareOf(t)!;
  const vendorName = hw.kind === 'power_shelf' ? ` (${vendorTable[hw.vendor].name})` : '';
  return {
    key: t.replace(/_/g, '-'),
    model: `${hw.family.toUpperCase()} NVL72 ${kindTable[hw.kind].label}${vendorName}`,
    manufacturer: hw.vendor,
  };
});

export interface WriteOptions {
  /** fleet_management_profile of every device, e.g. redfish-http:8443 for simulated BMCs. */
  managementProfile: string;
  credentialRef: string;
  /**
   * Where switch trays' NVOS answers: NVUE at http://<ip>:<nvuePort>, SSH at <ip>:<sshPort> (the simulator's layout).
   */
  nvos?: { nvuePort: number; sshPort: number };
}

/** The fleet custom fields on dcim.device the NetBox agent reads. */
const customFields = [
  ['fleet_management_profile', 'Fleet management profile'],
  ['fleet_credential_ref', 'Fleet credential reference'],
  ['fleet_nvos_url', 'Fleet NVOS NVUE URL'],
  ['fleet_nvos_ssh', 'Fleet NVOS SSH endpoint'],
  ['fleet_nvos_credential_ref', 'Fleet NVOS credential reference'],
  ['fleet_nvos_host_key', 'Fleet NVOS SSH host key'],
  ['fleet_redfish_system_id', 'Fleet Redfish ComputerSystem id'],
] as const;

function customFieldsOf(d: PlannedDevice, opts: WriteOptions): Record<string, string> {
  return {
    fleet_management_profile: opts.managementProfile,
    fleet_credential_ref: opts.credentialRef,
    ...(d.kind === 'switch' && opts.nvos
      ? { fleet_nvos_url: `http://${d.ip}:${opts.nvos.nvuePort}`, fleet_nvos_ssh: `${d.ip}:${opts.nvos.sshPort}` }
      : {}),
  };
}

export interface WrittenFleet {
  deviceIds: Map<string, number>;
  requests: number;
}

export async function writeFleet(w: NetboxWriter, fleet: Fleet, opts: WriteOptions): Promise<WrittenFleet> {
  const manufacturers = new Map<string, number>();
  for (const [slug, { name }] of Object.entries(vendorTable)) {
    manufacturers.set(slug, (await w.ensure('/api/dcim/manufacturers/', { slug }, { name, slug })).id);
  }
  const roles = new Map<string, number>();
  for (const [slug, name, color] of [
    ['compute-tray', 'Compute tray', '4caf50'],
    ['nvlink-switch-tray', 'NVLink switch tray', '2196f3'],
    ['power-shelf', 'Power shelf', 'ff9800'],
  ] as const) {
    roles.set(slug, (await w.ensure('/api/dcim/device-roles/', { slug }, { name, slug, color })).id);
  }
  const types = new Map<string, number>();
  for (const t of deviceTypeSpecs) {
    types.set(
      t.key,
      (
        await w.ensure(
          '/api/dcim/device-types/',
          { slug: t.key },
          {
            model: t.model,
            slug: t.key,
            manufacturer: manufacturers.get(t.manufacturer),
            u_height: 1,
            is_full_depth: true,
          },
        )
      ).id,
    );
  }
  const rackTypes = new Map<string, number>();
  for (const [key, model] of [
    ['gb200_nvl72', 'GB200 NVL72'],
    ['gb300_nvl72', 'GB300 NVL72'],
  ] as const) {
    const slug = key.replace('_', '-');
    rackTypes.set(
      key,
      (
        await w.ensure(
          '/api/dcim/rack-types/',
          { slug },
          {
            manufacturer: manufacturers.get('nvidia'),
            model,
            slug,
            form_factor: '4-post-cabinet',
            width: 19,
            u_height: 48,
          },
        )
      ).id,
    );
  }
  for (const [name, label] of customFields) {
    await w.ensure(
      '/api/extras/custom-fields/',
      { name },
      { name, label, type: 'text', object_types: ['dcim.device'] },
    );
  }

  const existingSites = new Map(
    (await w.call<{ results: { id: number; slug: string }[] }>('GET', '/api/dcim/sites/?limit=1000')).results.map(
      (s) => [s.slug, s.id],
    ),
  );
  const newSites = fleet.sites.filter((s) => !existingSites.has(s.slug));
  for (const s of await w.bulk<{ id: number; slug: string }>(
    'POST',
    '/api/dcim/sites/',
    newSites.map((s) => ({ name: s.name, slug: s.slug, status: 'active' })),
  ))
    existingSites.set(s.slug, s.id);

  const rackIds = new Map<string, number>();
  const racks = await w.bulk<{ id: number; name: string; site: { id: number } }>(
    'POST',
    '/api/dcim/racks/',
    fleet.racks.map((r) => ({
      name: r.name,
      site: existingSites.get(r.site),
      status: 'active',
      rack_type: rackTypes.get(r.type),
      u_height: 48,
      width: 19,
    })),
  );
  racks.forEach((r, i) => rackIds.set(`${fleet.racks[i]!.site}/${fleet.racks[i]!.name}`, r.id));

  const devices = await w.bulk<{ id: number; name: string }>(
    'POST',
    '/api/dcim/devices/',
    fleet.devices.map((d: PlannedDevice) => ({
      name: d.name,
      site: existingSites.get(d.site),
      rack: rackIds.get(`${d.site}/${d.rack}`),
      position: d.position,
      face: 'front',
      role: roles.get(netboxRoleOf[d.kind]),
      device_type: types.get(d.nodeType.replace(/_/g, '-')),
      serial: d.serial,
      status: 'active',
      custom_fields: customFieldsOf(d, opts),
    })),
  );
  const deviceIds = new Map(devices.map((d) => [d.name, d.id]));
  const ifaces = await w.bulk<{ id: number }>(
    'POST',
    '/api/dcim/interfaces/',
    fleet.devices.map((d) => ({ device: deviceIds.get(d.name), name: 'bmc', type: '1000base-t', mgmt_only: true })),
  );
  const macs = await w.bulk<{ id: number }>(
    'POST',
    '/api/dcim/mac-addresses/',
    fleet.devices.map((d, i) => ({
      mac_address: d.mac,
      assigned_object_type: 'dcim.interface',
      assigned_object_id: ifaces[i]!.id,
    })),
  );
  await w.bulk(
    'PATCH',
    '/api/dcim/interfaces/',
    ifaces.map((iface, i) => ({ id: iface.id, primary_mac_address: macs[i]!.id })),
  );
  const ips = await w.bulk<{ id: number }>(
    'POST',
    '/api/ipam/ip-addresses/',
    fleet.devices.map((d, i) => ({
      address: `${d.ip}/32`,
      status: 'active',
      assigned_object_type: 'dcim.interface',
      assigned_object_id: ifaces[i]!.id,
    })),
  );
  await w.bulk(
    'PATCH',
    '/api/dcim/devices/',
    fleet.devices.map((d, i) => ({ id: deviceIds.get(d.name), oob_ip: ips[i]!.id })),
  );
  return { deviceIds, requests: w.requests };
}

/**
 * Loads a planned fleet straight through NetBox's ORM (tools/netbox/run-script.sh):
 * seconds for 10,000 devices where the REST API takes hours on a small machine.
 * For benchmarks; the demo and tests write through the API.
 */
export async function bulkLoadFleet(db: string, fleet: Fleet, opts: WriteOptions): Promise<void> {
  const { execFile } = await import('node:child_process');
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  const dir = await mkdtemp(join(tmpdir(), 'fleetgen-'));
  const plan = join(dir, 'plan.json');
  await writeFile(plan, JSON.stringify(fleet));
  const root = fileURLToPath(new URL('../..', import.meta.url));
  try {
    await new Promise<void>((resolve, reject) =>
      execFile(
        'bash',
        [
          join(root, 'tools/netbox/run-script.sh'),
          '--db',
          db,
          join(root, 'tools/fleetgen/netbox_bulk.py'),
          `FLEET_PLAN=${plan}`,
          `FLEET_MANAGEMENT_PROFILE=${opts.managementProfile}`,
          `FLEET_CREDENTIAL_REF=${opts.credentialRef}`,
          ...(opts.nvos ? [`FLEET_NVUE_PORT=${opts.nvos.nvuePort}`, `FLEET_NVOS_SSH_PORT=${opts.nvos.sshPort}`] : []),
        ],
        { maxBuffer: 1 << 24, timeout: 1_800_000 },
        (err, _stdout, stderr) =>
          err ? reject(new Error(`bulk load failed: ${err.message}\n${stderr.slice(-3000)}`)) : resolve(),
      ),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
