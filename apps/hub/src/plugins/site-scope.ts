import type { FastifyInstance, FastifyRequest } from 'fastify';
import { siteOfTarget, type Db, type SiteTarget } from '@fleet/db';
import { checkSites } from '../services/site-scope.js';

/** Paths whose `:id` names something of one site, and what it names. */
const targets: [prefix: string, kind: SiteTarget | 'site'][] = [
  ['/v1/devices/:id', 'device'],
  ['/v1/racks/:id', 'rack'],
  ['/v1/jobs/:id', 'job'],
  ['/v1/firmware-campaigns/:id', 'job'],
  ['/v1/rma/:id', 'rma'],
  ['/v1/sites/:id', 'site'],
];

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The one check every route under a site's device, rack, job, campaign, RMA case or the site itself gets for a token
 * limited to some sites: a target of another site is a 403 naming that site, before the route reads or decides
 * anything (so it also comes before a 409 about the target's state). A target that does not exist is left to the
 * route's 404; a malformed id to its 400. Services check what a body selects (checkSites).
 */
export function registerSiteScope(app: FastifyInstance, db: Db): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const actor = request.actor;
    const url = request.routeOptions.url;
    if (!actor?.sites || request.routeOptions.config.sites !== 'scoped' || !url) return;
    const target = targets.find(([prefix]) => url === prefix || url.startsWith(`${prefix}/`));
    const id = (request.params as Record<string, string | undefined>)['id'];
    if (!target || id === undefined) return;
    const [, kind] = target;
    if (kind === 'site') return checkSites(actor, [id], `site/${id}`, 'path.id');
    if (!uuidPattern.test(id)) return;
    const found = await siteOfTarget(db, kind, id);
    if (found) checkSites(actor, [found.siteId], `${kind}/${id}`, 'path.id');
  });
}
