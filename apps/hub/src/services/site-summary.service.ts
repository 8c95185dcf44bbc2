import { getSiteSummary, type DbOrTx, type SiteSummary } from '@fleet/db';
import { notFound } from '../errors.js';

/** A site's counts for the fleet overview, from the projection alone; 404 for a site the hub does not know. */
export async function siteSummary(db: DbOrTx, siteId: string): Promise<SiteSummary> {
  const summary = await getSiteSummary(db, siteId);
  if (!summary) throw notFound('site', siteId);
  return summary;
}
