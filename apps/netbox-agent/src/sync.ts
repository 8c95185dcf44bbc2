import type { Logger } from 'pino';
import {
  analyzeMirror,
  bmcCandidates,
  deferCompliance,
  deleteByNetboxIds,
  deleteMissing,
  devicesAffectedBy,
  getOrCreateSyncState,
  openSyncIssueObjects,
  refreshCompliance,
  refreshInventoryIssues,
  setBmcUrls,
  siteIdsByNetboxId,
  updateSyncState,
  upsertDevices,
  upsertInterfaces,
  upsertIpAddresses,
  upsertRacks,
  upsertSites,
  type Db,
  type ChangedObjects,
  type DbOrTx,
  type NetboxKind,
  type PassIssues,
  type SyncIssue,
  type Tx,
} from '@fleet/db';
import { errorText } from '@fleet/config';
import { bmcUrlFor, SITE_ID_RULE } from '@fleet/domain';
import type { NetboxAgentConfig } from './config.js';
import { abortedByConflict, refusesTheRows } from './errors.js';
import { deviceRow, interfaceRow, ipRow, rackRow, siteRow } from './mapping.js';
import type { NetboxClient } from './netbox-client.js';
import {
  fieldsParam,
  type NbDevice,
  type NbDeviceType,
  type NbInterface,
  type NbIpAddress,
  type NbObjectChange,
  type NbRack,
  type NbSite,
} from './netbox-types.js';
import type { SyncMetrics } from './metrics.js';
import { Spool, type Spooled } from './spool.js';

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
  {
    kind: 'device',
    path: '/api/dcim/devices/',
    changeType: 'dcim.device',
    siteParam: 'site',
    params: { exclude: 'config_context' },
  },
  { kind: 'interface', path: '/api/dcim/interfaces/', changeType: 'dcim.interface', siteParam: 'site' },
  {
    kind: 'ip',
    path: '/api/ipam/ip-addresses/',
    changeType: 'ipam.ipaddress',
    params: { assigned_object_type: 'dcim.interface' },
  },
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
  /** Objects read from NetBox, per kind: applied, skipped or refused. */
  written: Record<string, number>;
  deleted: Record<string, number>;
  /** Objects not mirrored because what they belong to is not (a device of a site that is not mirrored...). */
  skipped: Record<string, number>;
  /** Objects that could not be applied; each is an inventory issue naming it. */
  refused: Record<string, number>;
  requests: number;
  openIssues: number;
  /** Devices whose BMC endpoint and inventory issues were recomputed: every device after a full pass, only those
   * the changes can affect after an incremental one. */
  derivedDevices: number;
}

/** A NetBox object as the pass handles it before mapping. */
interface NbObject extends Spooled {
  name?: string | null;
  slug?: string;
  address?: string;
  site?: { id: number; slug?: string; name?: string };
}

/** What one pass did, and the problems it met on the way (each becomes an inventory issue). */
class Pass {
  readonly read: Record<string, number> = {};
  readonly deleted: Record<string, number> = {};
  readonly skipped: Record<string, number> = {};
  readonly refused: Record<string, number> = {};
  readonly issues: SyncIssue[] = [];
  /** Objects applied or deleted: their earlier sync issues are settled by this pass. */
  private readonly touched: { objectType: string; netboxId: number }[] = [];
  derivedDevices = 0;

  constructor(readonly mode: SyncResult['mode']) {
    for (const spec of kinds)
      this.read[spec.kind] = this.deleted[spec.kind] = this.skipped[spec.kind] = this.refused[spec.kind] = 0;
  }

  issue(spec: KindSpec, netboxId: number, code: SyncIssue['code'], message: string): void {
    this.issues.push({ objectType: spec.changeType, netboxId, code, message });
  }

  /** An object applied or deleted. A full pass settles every earlier issue, so only an incremental one lists them. */
  touch(objectType: string, netboxId: number): void {
    if (this.mode === 'incremental') this.touched.push({ objectType, netboxId });
  }

  issuesForRefresh(): PassIssues {
    return { issues: this.issues, settled: this.mode === 'full' ? 'all' : this.touched };
  }
}

/** What a pass read from NetBox, kind by kind, until it has applied it. */
type Fetched = Spool<NetboxKind, NbObject>;

/** What an incremental pass read or saw deleted, by NetBox id: what the derived state can depend on. */
function changedObjects(fetched: Fetched, deletions: NbObjectChange[]): ChangedObjects {
  const ids = (kind: NetboxKind, type: string) => [
    ...fetched.kind(kind).ids,
    ...deletions.filter((c) => c.changed_object_type === type).map((c) => c.changed_object_id),
  ];
  return {
    devices: ids('device', 'dcim.device'),
    interfaces: ids('interface', 'dcim.interface'),
    ips: ids('ip', 'ipam.ipaddress'),
  };
}

const label = (spec: KindSpec, o: NbObject) =>
  `${spec.kind} ${o.name ?? o.slug ?? o.address ?? `#${o.id}`} (NetBox id ${o.id})`;

/**
 * Mirrors NetBox into Postgres. Full: every object, then whatever NetBox no longer has
 * is removed. Incremental: objects changed since the watermark (minus an overlap),
 * objects an earlier pass could not apply, and deletions from NetBox's change log; its
 * cost follows the number of changes, not the size of the fleet. An object Postgres refuses
 * becomes an inventory issue naming it; the rest of the pass goes on.
 */
export class NetboxSync {
  constructor(
    private readonly deps: SyncDeps,
    private deviceTypes = new Map<number, NbDeviceType>(),
  ) {}

  /** A kind's list parameters: its own, the fields the agent reads, and the configured sites. */
  private listParams(spec: KindSpec): Record<string, string | string[]> {
    const sites = this.deps.settings.sites;
    return {
      ...spec.params,
      ...fieldsParam(spec.kind),
      ...(sites && spec.siteParam ? { [spec.siteParam]: sites } : {}),
    };
  }

  /** One statement per kind; the NetBox ids written and the objects refused with a reason. */
  private async write(db: DbOrTx, spec: KindSpec, objects: NbObject[], pass: Pass): Promise<number[]> {
    switch (spec.kind) {
      case 'site': {
        const { written, refused } = await upsertSites(db, (objects as unknown as NbSite[]).map(siteRow));
        for (const { row, reason } of refused) {
          const what = `site ${row.name} (slug ${row.slug}, NetBox id ${row.netboxId})`;
          pass.issue(
            spec,
            row.netboxId,
            reason,
            reason === 'invalid_site_id'
              ? `${what}: the slug is no Fleet site id, which must be ${SITE_ID_RULE}; the site, its racks ` +
                  `and devices are not mirrored until its slug is changed in NetBox`
              : `${what}: Fleet site id ${row.slug} belongs to another mirrored site (a site keeps its Fleet ` +
                  `id when its slug is renamed); the site, its racks and devices are not mirrored until it has ` +
                  `another slug`,
          );
        }
        return written;
      }
      case 'rack':
        return upsertRacks(db, (objects as unknown as NbRack[]).map(rackRow));
      case 'device':
        return upsertDevices(
          db,
          (objects as unknown as NbDevice[]).map((d) => deviceRow(d, this.deviceTypes)),
        );
      case 'interface':
        return upsertInterfaces(db, (objects as unknown as NbInterface[]).map(interfaceRow));
      case 'ip':
        return upsertIpAddresses(db, (objects as unknown as NbIpAddress[]).map(ipRow));
    }
  }

  /**
   * Writes a page in one statement under a savepoint. When Postgres refuses its rows, each object is written alone
   * under its own savepoint, so the one that cannot be applied becomes an inventory issue and the others go in. Any
   * other failure (connection, timeout, serialization, lock) is no fault of the objects: it fails the whole pass,
   * which rolls back and is retried, rather than leaving stale rows behind issues that blame the objects.
   */
  private async apply(tx: Tx, spec: KindSpec, objects: NbObject[], pass: Pass): Promise<void> {
    if (!objects.length) return;
    const attempt = new Pass(pass.mode);
    let written: number[];
    try {
      written = await tx.transaction((sp) => this.write(sp, spec, objects, attempt));
    } catch (err) {
      if (!refusesTheRows(err)) throw err;
      if (objects.length > 1) {
        for (const o of objects) await this.apply(tx, spec, [o], pass);
        return;
      }
      const o = objects[0]!;
      const why = errorText(err, { keys: true });
      pass.refused[spec.kind]! += 1;
      pass.issue(spec, o.id, 'apply_failed', `${label(spec, o)} could not be mirrored: ${why}`);
      pass.touch(spec.changeType, o.id);
      this.deps.log.warn(
        { kind: spec.kind, netboxId: o.id, err: why },
        'a NetBox object could not be mirrored; the sync goes on without it',
      );
      return;
    }
    pass.issues.push(...attempt.issues);
    pass.refused[spec.kind]! += attempt.issues.length;
    const done = new Set(written);
    const refused = new Set(attempt.issues.map((i) => i.netboxId));
    for (const o of objects) {
      pass.touch(spec.changeType, o.id);
      if (done.has(o.id) || refused.has(o.id)) continue;
      pass.skipped[spec.kind]! += 1;
      // Interfaces follow their device and addresses outside the mirrored devices are out of scope: counted only.
      if (spec.kind === 'rack' || spec.kind === 'device') {
        const site = o.site?.slug ?? o.site?.name ?? `#${o.site?.id}`;
        pass.issue(
          spec,
          o.id,
          'site_not_mirrored',
          `${label(spec, o)} is in NetBox site ${site}, which is not mirrored (see that site's inventory ` +
            `issue); it is not mirrored either`,
        );
      }
    }
  }

  /**
   * Reads every object of each kind (cursor pages) into a spool on disk. The kinds are read side by side: NetBox
   * serves requests in parallel, while one kind's pages must follow each other (each names the next). They are
   * applied in dependency order afterwards, from the spool, so a pass holds a page at a time rather than the fleet. A
   * failed kind fails the pass, once the others have stopped.
   */
  private async fetchAll(extra: Record<string, string> = {}): Promise<Fetched> {
    const fetched: Fetched = await Spool.create(this.deps.settings.spoolDir);
    try {
      const reads = await Promise.allSettled(
        kinds.map((spec) =>
          fetched
            .kind(spec.kind)
            .addPages(this.deps.client.list<NbObject>(spec.path, { ...this.listParams(spec), ...extra })),
        ),
      );
      const failed = reads.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return fetched;
    } catch (err) {
      await this.close(fetched);
      throw err;
    }
  }

  /** Removes a pass's spool; a failure to is logged, never allowed to change the pass's outcome. */
  private async close(fetched: Fetched): Promise<void> {
    const failed = await fetched.close();
    if (failed) this.deps.log.warn({ err: failed.message }, 'the spool of a NetBox pass could not be removed');
  }

  /** Objects an earlier pass could not apply are read again, whether or not they changed since. */
  private async fetchUnsettled(fetched: Fetched): Promise<void> {
    const open = await openSyncIssueObjects(this.deps.db);
    for (const spec of kinds) {
      const spool = fetched.kind(spec.kind);
      const have = new Set(spool.ids);
      const ids = open
        .filter((o) => o.objectType === spec.changeType && !have.has(o.netboxId))
        .map((o) => String(o.netboxId));
      for (let i = 0; i < ids.length; i += 100) {
        await spool.addPages(
          this.deps.client.list<NbObject>(spec.path, { ...this.listParams(spec), id: ids.slice(i, i + 100) }),
        );
      }
    }
  }

  /** Applies what was read, kind by kind in dependency order, and returns the highest last_updated seen. */
  private async applyAll(tx: Tx, fetched: Fetched, pass: Pass): Promise<string> {
    let watermark = '';
    for (const spec of kinds) {
      const spool = fetched.kind(spec.kind);
      for await (const objects of spool.batches(1000)) await this.apply(tx, spec, objects, pass);
      if (spool.watermark > watermark) watermark = spool.watermark;
      pass.read[spec.kind] = spool.count;
    }
    return watermark;
  }

  async full(): Promise<SyncResult> {
    const { client } = this.deps;
    const requestsBefore = client.requests;
    this.deviceTypes.clear();
    for (const t of await client.all<NbDeviceType>('/api/dcim/device-types/', fieldsParam('deviceType')))
      this.deviceTypes.set(t.id, t);
    // Everything changed before this moment (NetBox's clock) is in what follows.
    const passStart = client.serverTime;
    const fetched = await this.fetchAll();
    try {
      // One transaction: readers of the mirror never see half a sync.
      const { pass, value: openIssues } = await this.transaction('full', async (tx, pass) => {
        const watermark = await this.applyAll(tx, fetched, pass);
        const sites = await this.siteScope(tx, fetched.kind('site').ids);
        for (const spec of [...kinds].reverse()) {
          pass.deleted[spec.kind] = await deleteMissing(tx, spec.kind, fetched.kind(spec.kind).ids, sites);
        }
        await analyzeMirror(tx);
        const open = await this.derive(tx, pass);
        await refreshCompliance(tx);
        const now = new Date();
        const mark = passStart ?? (watermark ? new Date(watermark) : now);
        await updateSyncState(tx, scope, {
          watermark: mark,
          changeWatermark: mark,
          lastFullSyncAt: now,
          lastSuccessAt: now,
          lastError: null,
          stale: false,
          sourceUrl: client.baseUrl,
          counts: pass.read,
        });
        return open;
      });
      return this.done(pass, client.requests - requestsBefore, openIssues);
    } finally {
      await this.close(fetched);
    }
  }

  /**
   * The Fleet ids of the configured sites (undefined: all sites). A configured slug may name a site whose Fleet id
   * is its slug from before a rename, so the sites read from NetBox are looked up by NetBox id as well.
   */
  private async siteScope(db: DbOrTx, sitesRead: number[]): Promise<string[] | undefined> {
    const slugs = this.deps.settings.sites;
    if (!slugs) return undefined;
    const ids = await siteIdsByNetboxId(db, sitesRead);
    return [...new Set([...slugs, ...ids.values()])];
  }

  async incremental(): Promise<SyncResult> {
    const { client, db, settings } = this.deps;
    const requestsBefore = client.requests;
    const state = await getOrCreateSyncState(db, scope);
    if (!state.watermark || !state.changeWatermark) return this.full();
    const overlapMs = settings.overlapS * 1000;
    const since = new Date(state.watermark.getTime() - overlapMs).toISOString();
    // Device types carry height, model and vendor; a fresh process loads them all once.
    const typeFilter = { ...fieldsParam('deviceType'), ...(this.deviceTypes.size ? { last_updated__gte: since } : {}) };
    for (const t of await client.all<NbDeviceType>('/api/dcim/device-types/', typeFilter))
      this.deviceTypes.set(t.id, t);
    // The next pass starts from here (NetBox's clock, less the overlap): its cost follows
    // what changed since, not how much changed just before the last watermark.
    const passStart = client.serverTime;
    const fetched = await this.fetchAll({ last_updated__gte: since });
    try {
      await this.fetchUnsettled(fetched);
      // Deletions: one change-log query for every kind (repeated parameters are ORed).
      const changesSince = new Date(state.changeWatermark.getTime() - overlapMs).toISOString();
      const changes = await client.all<NbObjectChange>('/api/core/object-changes/', {
        action: 'delete',
        time_after: changesSince,
        ...fieldsParam('objectChange'),
        changed_object_type: kinds.map((k) => k.changeType),
      });
      let changeWatermark = state.changeWatermark.toISOString();
      for (const c of changes) if (c.time > changeWatermark) changeWatermark = c.time;
      const changed = changedObjects(fetched, changes);
      const { pass, value: openIssues } = await this.transaction('incremental', async (tx, pass) => {
        // The devices the changes touch as the mirror was, and (below) as it is: a change can end a problem or start
        // one.
        const affected = new Set(await devicesAffectedBy(tx, changed));
        let watermark = await this.applyAll(tx, fetched, pass);
        if (state.watermark!.toISOString() > watermark) watermark = state.watermark!.toISOString();
        for (const spec of [...kinds].reverse()) {
          const ids = changes.filter((c) => c.changed_object_type === spec.changeType).map((c) => c.changed_object_id);
          pass.deleted[spec.kind] = await deleteByNetboxIds(tx, spec.kind, ids);
          for (const id of ids) pass.touch(spec.changeType, id);
        }
        const any = Object.values(pass.read).some((n) => n > 0) || Object.values(pass.deleted).some((n) => n > 0);
        if (any) for (const id of await devicesAffectedBy(tx, changed)) affected.add(id);
        const open = any ? await this.derive(tx, pass, [...affected]) : -1;
        if (any) await refreshCompliance(tx, [...affected]);
        await updateSyncState(tx, scope, {
          watermark: passStart && passStart.toISOString() > watermark ? passStart : new Date(watermark),
          changeWatermark:
            passStart && passStart.toISOString() > changeWatermark ? passStart : new Date(changeWatermark),
          lastSuccessAt: new Date(),
          lastError: null,
          stale: false,
          sourceUrl: client.baseUrl,
        });
        return open;
      });
      return this.done(pass, client.requests - requestsBefore, openIssues);
    } finally {
      await this.close(fetched);
    }
  }

  /**
   * Runs a pass's transaction with a fresh Pass, and again (three attempts in all) when Postgres aborted it for a
   * concurrent writer, such as a deadlock with a firmware report over the same devices: what was read from NetBox is
   * applied again rather than read again, which at 100,000 devices is minutes of NetBox's time.
   */
  private async transaction<T>(
    mode: SyncResult['mode'],
    work: (tx: Tx, pass: Pass) => Promise<T>,
  ): Promise<{ pass: Pass; value: T }> {
    for (let attempt = 1; ; attempt++) {
      const pass = new Pass(mode);
      try {
        const value = await this.deps.db.transaction(async (tx) => {
          // The pass refreshes the compliance of what it wrote once, before it commits (refreshCompliance).
          await deferCompliance(tx);
          return work(tx, pass);
        });
        return { pass, value };
      } catch (err) {
        if (!abortedByConflict(err) || attempt >= 3) throw err;
        this.deps.log.warn(
          { mode, attempt, err: errorText(err, { keys: true }) },
          'Postgres aborted the sync transaction for a concurrent writer; applying what was read again',
        );
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt + Math.random() * 200));
      }
    }
  }

  /** Counts a finished pass in the metrics and reports it. */
  private done(pass: Pass, requests: number, openIssues: number): SyncResult {
    const { mode } = pass;
    for (const spec of kinds) {
      this.deps.metrics.objects.inc({ kind: spec.kind, mode }, pass.read[spec.kind] ?? 0);
      this.deps.metrics.deletions.inc({ kind: spec.kind }, pass.deleted[spec.kind] ?? 0);
    }
    this.deps.metrics.requests.inc({ mode }, requests);
    if (pass.issues.length) {
      // The whole list is in the inventory issues; the log names the first few.
      const named = pass.issues.slice(0, 20).map((i) => `${i.code}: ${i.message}`);
      this.deps.log.warn(
        { mode, skipped: pass.skipped, refused: pass.refused, issues: named },
        `${pass.issues.length} NetBox objects are not mirrored; each is an inventory issue`,
      );
    }
    return {
      mode,
      written: pass.read,
      deleted: pass.deleted,
      skipped: pass.skipped,
      refused: pass.refused,
      requests,
      openIssues,
      derivedDevices: pass.derivedDevices,
    };
  }

  /**
   * BMC endpoints and inventory issues follow from the mirror, recomputed after changes: for the given devices (an
   * incremental pass), or for every device.
   */
  private async derive(db: DbOrTx, pass: Pass, deviceIds?: string[]): Promise<number> {
    const { metrics } = this.deps;
    const candidates = await bmcCandidates(db, deviceIds);
    pass.derivedDevices = candidates.length;
    await setBmcUrls(
      db,
      candidates.map((c) => ({
        deviceId: c.deviceId,
        // An address on two devices could power the wrong machine: not operated until fixed.
        bmcUrl: c.duplicated || c.addresses.length === 0 ? null : bmcUrlFor(c.profile, c.addresses[0]!),
      })),
    );
    const { open } = await refreshInventoryIssues(db, pass.issuesForRefresh(), deviceIds);
    metrics.openIssues.set(open);
    return open;
  }
}
