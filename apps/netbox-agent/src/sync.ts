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
  type DbOrTx,
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
  constructor(
    private readonly deps: SyncDeps,
    private deviceTypes = new Map<number, NbDeviceType>(),
  ) {}

  private siteFilter(spec: KindSpec): Record<string, string[]> {
    const sites = this.deps.settings.sites;
    return sites && spec.siteParam ? { [spec.siteParam]: sites } : {};
  }

  private async write(db: DbOrTx, kind: NetboxKind, objects: unknown[]): Promise<void> {
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

  /** Reads every object of each kind (cursor pages), in dependency order. */
  private async fetchAll(extra: Record<string, string> = {}): Promise<Map<NetboxKind, { id: number; last_updated: string }[]>> {
    const out = new Map<NetboxKind, { id: number; last_updated: string }[]>();
    for (const spec of kinds) {
      out.set(spec.kind, await this.deps.client.all(spec.path, { ...spec.params, ...this.siteFilter(spec), ...extra }));
    }
    return out;
  }

  async full(): Promise<SyncResult> {
    const { client } = this.deps;
    const requestsBefore = client.requests;
    this.deviceTypes.clear();
    for (const t of await client.all<NbDeviceType>('/api/dcim/device-types/')) this.deviceTypes.set(t.id, t);
    // Everything changed before this moment (NetBox's clock) is in what follows.
    const passStart = client.serverTime;
    const fetched = await this.fetchAll();
    let watermark = '';
    const written: Record<string, number> = {};
    const deleted: Record<string, number> = {};
    // One transaction: readers of the mirror never see half a sync.
    const openIssues = await this.deps.db.transaction(async (tx) => {
      for (const spec of kinds) {
        const objects = fetched.get(spec.kind)!;
        for (let i = 0; i < objects.length; i += 1000) await this.write(tx, spec.kind, objects.slice(i, i + 1000));
        for (const o of objects) if (o.last_updated > watermark) watermark = o.last_updated;
        written[spec.kind] = objects.length;
      }
      for (const spec of [...kinds].reverse()) {
        deleted[spec.kind] = await deleteMissing(tx, spec.kind, fetched.get(spec.kind)!.map((o) => o.id), this.deps.settings.sites);
      }
      const open = await this.derive(tx);
      const now = new Date();
      const mark = passStart ?? (watermark ? new Date(watermark) : now);
      await updateSyncState(tx, scope, { watermark: mark, changeWatermark: mark, lastFullSyncAt: now, lastSuccessAt: now, lastError: null, stale: false, sourceUrl: client.baseUrl, counts: written });
      return open;
    });
    return this.done('full', written, deleted, client.requests - requestsBefore, openIssues);
  }

  async incremental(): Promise<SyncResult> {
    const { client, db, settings } = this.deps;
    const requestsBefore = client.requests;
    const state = await getOrCreateSyncState(db, scope);
    if (!state.watermark || !state.changeWatermark) return this.full();
    const overlapMs = settings.overlapS * 1000;
    const since = new Date(state.watermark.getTime() - overlapMs).toISOString();
    let watermark = state.watermark.toISOString();
    // Device types carry height, model and vendor; a fresh process loads them all once.
    const typeFilter: Record<string, string> = this.deviceTypes.size ? { last_updated__gte: since } : {};
    for (const t of await client.all<NbDeviceType>('/api/dcim/device-types/', typeFilter)) this.deviceTypes.set(t.id, t);
    // The next pass starts from here (NetBox's clock, less the overlap): its cost follows
    // what changed since, not how much changed just before the last watermark.
    const passStart = client.serverTime;
    const fetched = await this.fetchAll({ last_updated__gte: since });
    // Deletions: one change-log query for every kind (repeated parameters are ORed).
    const changesSince = new Date(state.changeWatermark.getTime() - overlapMs).toISOString();
    const changes = await client.all<NbObjectChange>('/api/core/object-changes/', {
      action: 'delete',
      time_after: changesSince,
      changed_object_type: kinds.map((k) => k.changeType),
    });
    const written: Record<string, number> = {};
    const deleted: Record<string, number> = {};
    let changeWatermark = state.changeWatermark.toISOString();
    for (const c of changes) if (c.time > changeWatermark) changeWatermark = c.time;
    const openIssues = await db.transaction(async (tx) => {
      for (const spec of kinds) {
        const objects = fetched.get(spec.kind)!;
        await this.write(tx, spec.kind, objects);
        for (const o of objects) if (o.last_updated > watermark) watermark = o.last_updated;
        written[spec.kind] = objects.length;
      }
      for (const spec of [...kinds].reverse()) {
        const ids = changes.filter((c) => c.changed_object_type === spec.changeType).map((c) => c.changed_object_id);
        deleted[spec.kind] = await deleteByNetboxIds(tx, spec.kind, ids);
      }
      const changed = Object.values(written).some((n) => n > 0) || Object.values(deleted).some((n) => n > 0);
      const open = changed ? await this.derive(tx) : -1;
      await updateSyncState(tx, scope, {
        watermark: passStart && passStart.toISOString() > watermark ? passStart : new Date(watermark),
        changeWatermark: passStart && passStart.toISOString() > changeWatermark ? passStart : new Date(changeWatermark),
        lastSuccessAt: new Date(),
        lastError: null,
        stale: false,
        sourceUrl: client.baseUrl,
      });
      return open;
    });
    return this.done('incremental', written, deleted, client.requests - requestsBefore, openIssues);
  }

  /** Counts a finished pass in the metrics and reports it. */
  private done(mode: SyncResult['mode'], written: Record<string, number>, deleted: Record<string, number>, requests: number, openIssues: number): SyncResult {
    for (const spec of kinds) {
      this.deps.metrics.objects.inc({ kind: spec.kind, mode }, written[spec.kind] ?? 0);
      this.deps.metrics.deletions.inc({ kind: spec.kind }, deleted[spec.kind] ?? 0);
    }
    this.deps.metrics.requests.inc({ mode }, requests);
    return { mode, written, deleted, requests, openIssues };
  }

  /** BMC endpoints and inventory issues follow from the mirror, recomputed after changes. */
  private async derive(db: DbOrTx): Promise<number> {
    const { metrics } = this.deps;
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
