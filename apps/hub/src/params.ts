import { z } from 'zod';
import { siteId } from './validation.js';

/** An id the API made (jobs, devices, racks, packages, manifests, campaigns). */
export const uuid = z.string().uuid('must be a UUID');

/** `/…/:id` of a resource with a UUID. */
export const IdParam = z.object({ id: uuid }).strict();

/** `/v1/sites/:id…`: a site's id, which is no UUID. */
export const SiteIdParam = z.object({ id: siteId }).strict();
