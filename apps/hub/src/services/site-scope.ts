import { siteAllowed } from '@fleet/domain';
import { ApiError } from '../errors.js';

/** What a token may reach: its name and the sites it is limited to (null: every site). */
export interface SiteBound {
  name: string;
  sites: readonly string[] | null;
}

const limitedTo = (who: SiteBound) => `token ${who.name} may act only on site ${who.sites!.join(', ')}`;

/**
 * 403 unless the token may act on every one of `siteIds` (docs/security.md "Per-site roles"): a batch or selection over
 * several sites needs them all. `what` names the target (device/…, rack/…); null stands for a target of no single site
 * (a batch over several sites), which only a token of every site may touch.
 */
export function checkSites(who: SiteBound, siteIds: Iterable<string | null>, what: string, field?: string): void {
  if (who.sites === null) return;
  for (const siteId of new Set(siteIds)) {
    if (siteAllowed(who.sites, siteId)) continue;
    const issue = siteId === null ? 'spans several sites' : `of site ${siteId}`;
    throw new ApiError(
      'PERMISSION_DENIED',
      `${limitedTo(who)}; ${what} is ${siteId === null ? 'of no single site' : `of site ${siteId}`}`,
      [{ ...(field ? { field } : {}), issue: `${issue}, outside the token's sites` }],
    );
  }
}

/**
 * The sites a list may show: as asked when the token may see them all (403 naming the first it may not), the token's
 * own when the caller asked for none. Lists are filtered to the token's sites by default.
 */
export function scopedSiteFilter(who: SiteBound, requested: string[] | undefined, field: string): string[] | undefined {
  if (who.sites === null) return requested;
  if (!requested?.length) return [...who.sites];
  const outside = requested.find((s) => !siteAllowed(who.sites, s));
  if (outside !== undefined)
    throw new ApiError('PERMISSION_DENIED', `${limitedTo(who)}; ${field} names site ${outside}`, [
      { field, issue: `site ${outside} is outside the token's sites` },
    ]);
  return requested;
}
