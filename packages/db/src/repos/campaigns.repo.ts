import { and, asc, desc, eq, gt, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { CampaignPlan, CampaignPolicy, CampaignWave, MaintenanceWindowSpec } from '@fleet/domain';
import { readSnapshot, type Db, type DbOrTx } from '../client.js';
import { childCounts } from './parent-jobs.repo.js';
import {
  campaigns,
  deviceFirmware,
  devices,
  firmwareManifests,
  jobs,
  maintenanceWindows,
  type Device,
  type FirmwareManifest,
  type Job,
} from '../schema/index.js';

const openStates = ['queued', 'running', 'cancelling'];

/** One array parameter: a site can hold more devices than a statement takes parameters. */
const uuidArray = (ids: string[]) => sql`${`{${ids.join(',')}}`}::uuid[]`;

export interface CandidateQuery {
  siteId: string;
  rackIds?: string[] | undefined;
  deviceIds?: string[] | undefined;
  nodeTypes?: string[] | undefined;
}

/** The site's live devices a campaign may cover: each filter is an OR of its values, filters AND together. */
export async function campaignCandidates(db: DbOrTx, q: CandidateQuery): Promise<Device[]> {
  const c: SQL[] = [eq(devices.siteId, q.siteId), isNull(devices.deletedAt)];
  if (q.rackIds?.length) c.push(inArray(devices.rackId, q.rackIds));
  if (q.deviceIds?.length) c.push(inArray(devices.id, q.deviceIds));
  if (q.nodeTypes?.length) c.push(inArray(devices.nodeType, q.nodeTypes));
  return db
    .select()
    .from(devices)
    .where(and(...c))
    .orderBy(asc(devices.name), asc(devices.id));
}

/** The manifests named by id, and the default manifest of each hardware type given. */
export async function manifestsByIdOrDefault(
  db: DbOrTx,
  ids: string[],
  defaultFor: string[],
): Promise<FirmwareManifest[]> {
  const c: SQL[] = [];
  if (ids.length) c.push(inArray(firmwareManifests.id, ids));
  if (defaultFor.length)
    c.push(and(eq(firmwareManifests.isDefault, true), inArray(firmwareManifests.hardwareType, defaultFor))!);
  if (!c.length) return [];
  return db
    .select()
    .from(firmwareManifests)
    .where(or(...c));
}

/** Last reported installed versions: device id → component id → version. */
export async function installedFirmware(db: DbOrTx, deviceIds: string[]): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  if (!deviceIds.length) return out;
  const rows = await db
    .select({
      deviceId: deviceFirmware.deviceId,
      componentId: deviceFirmware.componentId,
      version: deviceFirmware.version,
    })
    .from(deviceFirmware)
    .where(sql`${deviceFirmware.deviceId} = any(${uuidArray(deviceIds)})`);
  for (const r of rows) {
    const m = out.get(r.deviceId) ?? new Map<string, string>();
    m.set(r.componentId, r.version);
    out.set(r.deviceId, m);
  }
  return out;
}

/** The active job of each given device that has one, with the device name for messages. */
export async function activeJobsOfDevices(
  db: DbOrTx,
  deviceIds: string[],
): Promise<{ deviceId: string; name: string; jobId: string; kind: string }[]> {
  if (!deviceIds.length) return [];
  return db
    .select({ deviceId: devices.id, name: devices.name, jobId: jobs.id, kind: jobs.kind })
    .from(jobs)
    .innerJoin(devices, eq(devices.id, jobs.deviceId))
    .where(and(sql`${jobs.deviceId} = any(${uuidArray(deviceIds)})`, inArray(jobs.state, openStates)))
    .orderBy(asc(devices.name));
}

export async function insertCampaign(tx: DbOrTx, row: typeof campaigns.$inferInsert): Promise<void> {
  await tx.insert(campaigns).values(row);
}

export interface WaveSummary {
  index: number;
  kind: CampaignWave['kind'];
  devices: number;
}

/** A campaign with its job and its plan reduced in SQL: a plan of thousands of devices never leaves Postgres whole. */
export interface CampaignSummary {
  id: string;
  name: string;
  siteId: string;
  policy: CampaignPolicy;
  createdBy: string;
  createdAt: Date;
  deviceCount: number;
  waves: WaveSummary[];
  estimatedDurationS: number;
  lowerBoundS: number | null;
  excludedCount: number;
  job: Job;
}

const summary = {
  id: campaigns.id,
  name: campaigns.name,
  siteId: campaigns.siteId,
  policy: campaigns.policy,
  createdBy: campaigns.createdBy,
  createdAt: campaigns.createdAt,
  deviceCount: sql<number>`jsonb_array_length(${campaigns.plan}->'devices')`,
  waves: sql<WaveSummary[]>`(select coalesce(jsonb_agg(
      jsonb_build_object('index', w->'index', 'kind', w->'kind', 'devices', jsonb_array_length(w->'deviceIds'))
      order by (w->>'index')::int), '[]'::jsonb)
    from jsonb_array_elements(${campaigns.plan}->'waves') w)`,
  estimatedDurationS: sql<number>`(${campaigns.plan}->>'estimatedDurationS')::float8`,
  lowerBoundS: sql<number | null>`(${campaigns.plan}->>'lowerBoundS')::float8`,
  excludedCount: sql<number>`jsonb_array_length(${campaigns.plan}->'excluded')`,
  job: jobs,
};

/** One campaign, with the devices its plan left out. */
export async function getCampaignSummary(
  db: DbOrTx,
  id: string,
): Promise<(CampaignSummary & { excluded: CampaignPlan['excluded'] }) | undefined> {
  const [row] = await db
    .select({ ...summary, excluded: sql<CampaignPlan['excluded']>`${campaigns.plan}->'excluded'` })
    .from(campaigns)
    .innerJoin(jobs, eq(jobs.id, campaigns.id))
    .where(eq(campaigns.id, id));
  return row;
}

export interface CampaignPageQuery {
  limit: number;
  after?: { createdAt: Date; id: string } | undefined;
  siteId?: string[] | undefined;
  state?: string[] | undefined;
}

/** Newest first, keyset on (created_at, id). */
export async function listCampaigns(db: DbOrTx, q: CampaignPageQuery): Promise<CampaignSummary[]> {
  const c: SQL[] = [];
  if (q.siteId?.length) c.push(inArray(campaigns.siteId, q.siteId));
  if (q.state?.length) c.push(inArray(jobs.state, q.state));
  if (q.after)
    c.push(
      or(
        lt(campaigns.createdAt, q.after.createdAt),
        and(eq(campaigns.createdAt, q.after.createdAt), lt(campaigns.id, q.after.id)),
      )!,
    );
  return db
    .select(summary)
    .from(campaigns)
    .innerJoin(jobs, eq(jobs.id, campaigns.id))
    .where(c.length ? and(...c) : undefined)
    .orderBy(desc(campaigns.createdAt), desc(campaigns.id))
    .limit(q.limit);
}

export interface CampaignDevice {
  job: Job;
  name: string;
  rackId: string | null;
  nodeType: string | null;
}

export interface CampaignDevicePageQuery {
  campaignId: string;
  limit: number;
  /** Keyset position: the device name and job id of the last row of the previous page. */
  after?: { name: string; jobId: string } | undefined;
  state?: string[] | undefined;
}

/** A campaign's device jobs by device name, keyset on (name, job id). */
export async function listCampaignDevices(db: DbOrTx, q: CampaignDevicePageQuery): Promise<CampaignDevice[]> {
  const c: SQL[] = [eq(jobs.parentId, q.campaignId)];
  if (q.state?.length) c.push(inArray(jobs.state, q.state));
  if (q.after)
    c.push(or(gt(devices.name, q.after.name), and(eq(devices.name, q.after.name), gt(jobs.id, q.after.jobId)))!);
  return db
    .select({ job: jobs, name: devices.name, rackId: devices.rackId, nodeType: devices.nodeType })
    .from(jobs)
    .innerJoin(devices, eq(devices.id, jobs.deviceId))
    .where(and(...c))
    .orderBy(asc(devices.name), asc(jobs.id))
    .limit(q.limit);
}

/** Replaces all of a site's windows and returns those it replaced; the caller supplies the transaction. */
export async function replaceMaintenanceWindows(
  tx: DbOrTx,
  siteId: string,
  windows: MaintenanceWindowSpec[],
): Promise<MaintenanceWindowSpec[]> {
  // The site row lock serialises replaces: two at once would each delete only the rows they saw and keep both new sets.
  await tx.execute(sql`select 1 from sites where id = ${siteId} for update`);
  const old = await tx.delete(maintenanceWindows).where(eq(maintenanceWindows.siteId, siteId)).returning();
  if (windows.length) await tx.insert(maintenanceWindows).values(windows.map((w) => ({ siteId, ...w })));
  return old.map((w) => ({ weekdays: w.weekdays, startMinute: w.startMinute, durationMinutes: w.durationMinutes }));
}

/**
 * A campaign's summary, its members by state and its first `failuresShown` failed members, read in one snapshot so that
 * the counts add up to what the summary and the failures say; undefined when there is no such campaign.
 */
export async function readCampaignDetail(db: Db, id: string, failuresShown: number) {
  return readSnapshot(db, async (tx) => {
    const summary = await getCampaignSummary(tx, id);
    if (!summary) return undefined;
    const counts = (await childCounts(tx, [id])).get(id) ?? {};
    const failures = await listCampaignDevices(tx, { campaignId: id, state: ['failed'], limit: failuresShown });
    return { summary, counts, failures };
  });
}
