import { unwrap, type Rack } from '@fleet/client';
import { UsageError } from '../exit-codes.js';
import type { Hub } from './hub.js';
import { pages } from './pages.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A rack by ID, or by name (`--site` narrows a name that several sites use). */
export async function resolveRack(hub: Hub, ref: string, site?: string): Promise<string> {
  if (uuid.test(ref)) return ref;
  const matches: Rack[] = [];
  for await (const page of pages<Rack>(hub, '/v1/racks', site ? { site_id: [site] } : {}))
    matches.push(...page.filter((r) => r.name === ref));
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) throw new UsageError(`no rack named ${ref}${site ? ` in site ${site}` : ''}`);
  throw new UsageError(
    `${matches.length} racks are named ${ref} (sites ${matches.map((r) => r.site_id).join(', ')}); add --site`,
  );
}

/** Devices are named by ID: names repeat across sites and racks. */
export function deviceId(ref: string): string {
  if (!uuid.test(ref)) throw new UsageError(`${ref} is not a device ID (find it with: fleetctl get devices)`);
  return ref;
}

export async function getDevice(hub: Hub, id: string) {
  return unwrap(hub.api.GET('/v1/devices/{id}', { params: { path: { id: deviceId(id) } } }));
}
