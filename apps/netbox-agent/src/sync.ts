import type { Logger } from 'pino';
import {
  bmcCandidates,
  deleteByNetboxIds,
  deleteMissing,
  getOrCreateSyncState,
  refreshInventoryIssues,
  setBmcUrls,
  updateSyncState,
  upsertDevices,
  upsertInterfaces,
  upsertIpAddresses,
  upsertRacks,
  upsertSites,
  type Db,
  type NetboxKind,
} from '@fleet/db';
import { bmcUrlFor } from '@fleet/domain';
import type { NetboxAgentConfig } from './config.js';
import { deviceRow, interfaceRow, ipRow, rackRow, siteRow } from './mapping.js';
import type { NetboxClient } from './netbox-client.js';
import type { NbDevice, NbDeviceType, NbInterface, NbIpAddress, NbObjectChange, NbRack, NbSite } from './netbox-types.js';
import type { SyncMetrics } from './metrics.js';

export const scope = 'netbox';

interface KindSpec {
  kind: NetboxKind;
  path: string;
  changeType: string;
  /** Query filter limiting the kind to the configured sites. */
  siteParam?: string;
  params?: Record<string, string>;
}

/** In dependency order: a rack needs its site, a device its rack, an address its interface. */
const kinds: KindSpec[] = [
  { kind: 'site', path: '/api/dcim/sites/', changeType: 'dcim.site', siteParam: 'slug' },
  { kind: 'rack', path: '/api/dcim/racks/', changeType: 'dcim.rack', siteParam: 'site' },
  { kind: 'device', path: '/api/dcim/devices/', changeType: 'dcim.device', siteParam: 'site', params: { exclude: 'config_context' } },
  { kind: 'interface', path: '/api/dcim/interfaces/', changeType: 'dcim.interface', siteParam: 'site' },
  { kind: 'ip', path: '/api/ipam/ip-addresses/', changeType: 'ipam.ipaddress', params: { assigned_object_type: 'dcim.interface' } },
];

export interface SyncDeps {
  db: Db;
  client: NetboxClient;
  log: Logger;
  metrics: SyncMetrics;
  settings: NetboxAgentConfig['sync'];
}

export interface SyncResult {
  mode: 'full' | 'incremental';
  written: Record<string, number>;
  deleted: Record<string, number>;
  requests: number;
  openIssues: number;
}

/**
 * Mirrors NetBox into Postgres. Full: every object, then whatever NetBox no longer has
 * is removed. Incremental: objects changed since the watermark (minus an overlap) and
 * deletions from NetBox's change log; its cost follows the number of changes, not the
 * size of the fleet.
 */
export class NetboxSync {
  private deviceTypes = new Map<number, NbDeviceType>();

  constructor(private readonly deps: SyncDeps) {}

  private siteFilter(spec: KindSpec): Record<string, string[]> {
    const sites = this.deps.settings.sites;
    return sites && spec.siteParam ? { [spec.siteParam]: sites } : {};
  }

  private async write(kind: NetboxKind, objects: unknown[]): Promise<void> {
    const { db } = this.deps;
    switch (kind) {
      case 'site':
        return upsertSites(db, (objects as NbSite[]).map(siteRow));
      case 'rack':
        return upsertRacks(db, (objects as NbRack[]).map(rackRow));
      case 'device':
        await upsertDevices(db, (objects as NbDevice[]).map((d) => deviceRow(d, this.deviceTypes)));
        return;
      case 'interface':
        return upsertInterfaces(db, (objects as NbInterface[]).map(interfaceRow));
      case 'ip':
        return upsertIpAddresses(db, (objects as NbIpAddress[]).map(ipRow));
    }
  }

  async full(): Promise<SyncResult> {
    const { client, metrics } = this.deps;
    const requestsBefore = client.requests;
    this.deviceTypes = new Map((await client.all<NbDeviceType>('/api/dcim/device-types/')).map((t) => [t.id, t]));
    let watermark = '';
    const written: Record<string, number> = {};
    const present = new Map<NetboxKind, number[]>();
    for (const spec of kinds) {
      const ids: number[] = [];
      for await (const page of client.list<{ id: number; last_updated: string }>(spec.path, { ...spec.params, ...this.siteFilter(spec) })) {
        await this.write(spec.kind, page);
        for (const o of page) {
          ids.push(o.id);
          if (o.last_updated > watermark) watermark = o.last_updated;
        }
      }
      present.set(spec.kind, ids);
      written[spec.kind] = ids.length;
      metrics.objects.inc({ kind: spec.kind, mode: 'full' }, ids.length);
    }
    const deleted: Record<string, number> = {};
    for (const spec of [...kinds].reverse()) {
      deleted[spec.kind] = await deleteMissing(this.deps.db, spec.kind, present.get(spec.kind) ?? [], this.deps.settings.sites);
      metrics.deletions.inc({ kind: spec.kind }, deleted[spec.kind]!);
    }
    const openIssues = await this.derive();
    const now = new Date();
    const mark = watermark ? new Date(watermark) : now;
    await updateSyncState(this.deps.db, scope, {
      watermark: mark,
      changeWatermark: mark,
      lastFullSyncAt: now,
      lastSuccessAt: now,
      lastError: null,
      stale: false,
      sourceUrl: client.baseUrl,
      counts: written,
    });
    const requests = client.requests - requestsBefore;
    metrics.requests.inc({ mode: 'full' }, requests);
    return { mode: 'full', written, deleted, requests, openIssues };
  }

  async incremental(): Promise<SyncResult> {
    const { client, metrics, db, settings } = this.deps;
    const requestsBefore = client.requests;
    const state = await getOrCreateSyncState(db, scope);
    if (!state.watermark || !state.changeWatermark) return this.full();
    const overlapMs = settings.overlapS * 1000;
    const since = new Date(state.watermark.getTime() - overlapMs).toISOString();
    let watermark = state.watermark.toISOString();
    const written: Record<string, number> = {};

    for (const t of await client.all<NbDeviceType>('/api/dcim/device-types/', { last_updated__gte: since })) this.deviceTypes.set(t.id, t);
    for (const spec of kinds) {
      let n = 0;
      for await (const page of client.list<{ id: number; last_updated: string }>(spec.path, { ...spec.params, ...this.siteFilter(spec), last_updated__gte: since })) {
        await this.write(spec.kind, page);
        n += page.length;
        for (const o of page) if (o.last_updated > watermark) watermark = o.last_updated;
      }
      written[spec.kind] = n;
      metrics.objects.inc({ kind: spec.kind, mode: 'incremental' }, n);
    }

    // Deletions: one change-log query for every kind (repeated parameters are ORed).
    const changesSince = new Date(state.changeWatermark.getTime() - overlapMs).toISOString();
    const changes = await client.all<NbObjectChange>('/api/core/object-changes/', {
      action: 'delete',
      time_after: changesSince,
      changed_object_type: kinds.map((k) => k.changeType),
    });
    const deleted: Record<string, number> = {};
    let changeWatermark = state.changeWatermark.toISOString();
    for (const spec of [...kinds].reverse()) {
      const ids = changes.filter((c) => c.changed_object_type === spec.changeType).map((c) => c.changed_object_id);
      deleted[spec.kind] = await deleteByNetboxIds(db, spec.kind, ids);
      metrics.deletions.inc({ kind: spec.kind }, deleted[spec.kind]!);
    }
    for (const c of changes) if (c.time > changeWatermark) changeWatermark = c.time;

    const changed = Object.values(written).some((n) => n > 0) || Object.values(deleted).some((n) => n > 0);
    const openIssues = changed ? await this.derive() : undefined;
    const now = new Date();
    await updateSyncState(db, scope, {
      watermark: new Date(watermark),
      changeWatermark: new Date(changeWatermark),
      lastSuccessAt: now,
      lastError: null,
      stale: false,
      sourceUrl: client.baseUrl,
    });
    const requests = client.requests - requestsBefore;
    metrics.requests.inc({ mode: 'incremental' }, requests);
    return { mode: 'incremental', written, deleted, requests, openIssues: openIssues ?? -1 };
  }

  /** BMC endpoints and inventory issues follow from the mirror, recomputed after changes. */
  private async derive(): Promise<number> {
    const { db, metrics } = this.deps;
    const candidates = await bmcCandidates(db);
    await setBmcUrls(
      db,
      candidates.map((c) => ({
        deviceId: c.deviceId,
        // An address on two devices could power the wrong machine: not operated until fixed.
        bmcUrl: c.duplicated || c.addresses.length === 0 ? null : bmcUrlFor(c.profile, c.addresses[0]!),
      })),
    );
    const { open } = await refreshInventoryIssues(db);
    metrics.openIssues.set(open);
    return open;
  }
}
