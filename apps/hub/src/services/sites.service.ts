import {
  createApiToken,
  getSite,
  insertSite,
  isUniqueViolation,
  lockSitesForJobs,
  siteSatellitesOf,
  startSiteDrain,
  uniqueIndexes,
  type Db,
  type Site,
  type Tx,
} from '@fleet/db';
import { siteState } from '@fleet/domain';
import { ApiError, notFound } from '../errors.js';
import { siteView } from '../views.js';
import { auditAccepted, type Caller } from './caller.js';
import { idempotentCreate, type CreateAnswer } from './idempotent-create.js';

type Created = Promise<{ answer: CreateAnswer; replayed: boolean }>;

/** The name of the satellite token a registration makes. */
export const satelliteTokenName = (siteId: string) => `satellite-${siteId}`;

/**
 * Registers a site by hand with its satellite's credential (docs/deployment.md, "Sites"): the site, a token of role
 * satellite limited to it and the audit row, in one transaction. The answer names the task queue and carries the
 * token's secret once; a replay of its Idempotency-Key answers the same site and token id without the secret. An id in
 * use (removed sites keep theirs: jobs refer to them) is a 409.
 */
export async function createSite(db: Db, caller: Caller, input: { id: string; name: string }): Created {
  return idempotentCreate(db, caller, async (tx) => {
    if (await getSite(tx, input.id))
      throw new ApiError('ALREADY_EXISTS', `site ${input.id} already exists`, [{ field: 'body.id', issue: 'taken' }]);
    const row = await insertSite(tx, input);
    const made = await makeSatelliteToken(tx, caller, row.id);
    await auditAccepted(tx, caller, 201, {
      action: 'site.create',
      target: `site/${row.id}`,
      details: { satellite_token: made.row.id },
    });
    const credential = { id: made.row.id, name: made.row.name, role: 'satellite' as const };
    const site = siteView(row, undefined);
    return {
      status: 201,
      headers: { location: `/v1/sites/${row.id}` },
      body: { ...site, satellite_token: { ...credential, token: made.token } },
      stored: { ...site, satellite_token: { ...credential, token: null } },
    };
  });
}

async function makeSatelliteToken(tx: Tx, caller: Caller, siteId: string) {
  const name = satelliteTokenName(siteId);
  // A savepoint: the name taken is a 409, not an aborted transaction.
  return tx
    .transaction((sp) => createApiToken(sp, name, 'satellite', { sites: [siteId], createdBy: caller.actor.name }))
    .catch((err: unknown) => {
      if (isUniqueViolation(err, uniqueIndexes.tokenName))
        throw new ApiError('ALREADY_EXISTS', `a token named ${name} exists already, so site ${siteId} cannot have it`, [
          { field: 'body.id', issue: 'satellite token name taken' },
        ]);
      throw err;
    });
}

/**
 * Asks for a site's removal (DELETE /v1/sites/{id}): the site drains (new jobs on it are refused, see
 * refuseClosedSites) and the workflow agent removes it, revoking its satellite tokens, once its running jobs have
 * finished. Asking again while it drains answers the same; a removed site is a 404.
 */
export async function removeSite(db: Db, caller: Caller, id: string): Promise<Site> {
  const site = await getSite(db, id);
  if (!site || site.removedAt) throw notFound('site', id);
  if (site.drainingSince) return site;
  return db.transaction(async (tx) => {
    const row = await startSiteDrain(tx, id, caller.actor.name);
    if (!row) return (await getSite(tx, id))!;
    await auditAccepted(tx, caller, 202, { action: 'site.remove', target: `site/${id}` });
    return row;
  });
}

/**
 * The one check every job creation makes in its transaction (createJob, createParentJob): a 409 naming the site when
 * one of `siteIds` drains or was removed. The rows stay share-locked until the job commits, so a drain cannot miss it.
 */
export async function refuseClosedSites(tx: Tx, siteIds: Iterable<string | null | undefined>): Promise<void> {
  const ids = [...new Set([...siteIds].filter((s): s is string => !!s))];
  for (const s of await lockSitesForJobs(tx, ids)) {
    const state = siteState(s);
    if (state === 'active') continue;
    throw new ApiError(
      'CONFLICT',
      `site ${s.id} is ${state === 'draining' ? 'draining for removal' : 'removed'}: it takes no new jobs`,
      [{ field: 'site_id', issue: `site ${s.id} ${state}` }],
    );
  }
}

/** A site as the API shows it, with its satellite's last liveness check. */
export async function siteWithSatellite(db: Db, site: Site) {
  return siteView(site, (await siteSatellitesOf(db, [site.id])).get(site.id));
}
