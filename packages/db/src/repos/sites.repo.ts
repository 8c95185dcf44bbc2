import { and, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import { terminalJobStates } from '@fleet/domain';
import type { Db, DbOrTx } from '../client.js';
import { sqlList } from '../schema/_columns.js';
import { insertAudit } from './audit.repo.js';
import { siteSatellites, sites, type Site, type SiteSatellite } from '../schema/index.js';

/**
 * The given sites' removal state, their rows share-locked until the transaction ends: a job written in it and a drain
 * (which locks the row for update) are ordered, so a drain never misses a job accepted while it ran.
 */
export async function lockSitesForJobs(
  tx: DbOrTx,
  siteIds: string[],
): Promise<Pick<Site, 'id' | 'drainingSince' | 'removedAt'>[]> {
  if (!siteIds.length) return [];
  return tx
    .select({ id: sites.id, drainingSince: sites.drainingSince, removedAt: sites.removedAt })
    .from(sites)
    .where(inArray(sites.id, siteIds))
    .for('share');
}

/** Starts a site's drain; undefined when it drains already (or is gone). */
export async function startSiteDrain(tx: DbOrTx, id: string, by: string): Promise<Site | undefined> {
  const [row] = await tx
    .update(sites)
    .set({ drainingSince: sql`now()`, drainedBy: by })
    .where(and(eq(sites.id, id), isNull(sites.drainingSince), isNull(sites.removedAt)))
    .returning();
  return row;
}

export interface SiteRemoval {
  siteId: string;
  drainedBy: string | null;
  /** The site's satellite tokens this removal revoked. */
  revokedTokenIds: string[];
}

/**
 * Removes every draining site with no unfinished job left, in one transaction: the site's removed_at, its satellite
 * tokens (role satellite, limited to exactly that site) revoked by `actor`, and an audit row `site.removed` per site.
 */
export async function finishSiteRemovals(db: Db, actor: string): Promise<SiteRemoval[]> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.execute<{ site_id: string; drained_by: string | null; token_ids: string[] }>(sql`
      with removed as (
        update sites s set removed_at = now()
        where s.draining_since is not null and s.removed_at is null
          and not exists (
            select 1 from jobs j where j.site_id = s.id and j.state not in ${sqlList(terminalJobStates)}
          )
        returning s.id, s.drained_by
      ), revoked as (
        update api_tokens t
        set revoked_at = now(), revoked_by = ${actor}, revoke_reason = 'site ' || r.id || ' removed'
        from removed r
        where t.role = 'satellite' and t.sites = array[r.id] and t.revoked_at is null
        returning t.id, r.id as site_id
      )
      select r.id as site_id, r.drained_by,
        coalesce(array_agg(v.id::text) filter (where v.id is not null), '{}') as token_ids
      from removed r left join revoked v on v.site_id = r.id
      group by r.id, r.drained_by
      order by r.id`);
    const removals = rows.map((r) => ({ siteId: r.site_id, drainedBy: r.drained_by, revokedTokenIds: r.token_ids }));
    for (const r of removals)
      await insertAudit(tx, {
        actor,
        role: null,
        action: 'site.removed',
        target: `site/${r.siteId}`,
        requestId: `${actor}:site-removal`,
        outcome: 'accepted',
        statusCode: 200,
        details: { drained_by: r.drainedBy, revoked_tokens: r.revokedTokenIds },
      });
    return removals;
  });
}

/** The ids of the removed sites. */
export async function removedSiteIds(db: DbOrTx): Promise<string[]> {
  const rows = await db.select({ id: sites.id }).from(sites).where(isNotNull(sites.removedAt));
  return rows.map((r) => r.id);
}

export interface PollerReading {
  siteId: string;
  pollers: number;
  lastSeenAt: Date | null;
}

/** What one check learnt of every site's satellite, in one statement. */
export async function recordSatellitePollers(db: DbOrTx, readings: PollerReading[], checkedAt: Date): Promise<void> {
  if (!readings.length) return;
  await db
    .insert(siteSatellites)
    .values(readings.map((r) => ({ ...r, checkedAt })))
    .onConflictDoUpdate({
      target: siteSatellites.siteId,
      set: {
        pollers: sql`excluded.pollers`,
        lastSeenAt: sql`excluded.last_seen_at`,
        checkedAt: sql`excluded.checked_at`,
      },
    });
}

/** The satellite rows of the given sites, by site id. */
export async function siteSatellitesOf(db: DbOrTx, siteIds: string[]): Promise<Map<string, SiteSatellite>> {
  if (!siteIds.length) return new Map();
  const rows = await db.select().from(siteSatellites).where(inArray(siteSatellites.siteId, siteIds));
  return new Map(rows.map((r) => [r.siteId, r]));
}
