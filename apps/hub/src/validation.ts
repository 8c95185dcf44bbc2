import { z } from 'zod';
import { SITE_ID_PATTERN, SITE_ID_RULE } from '@fleet/domain';
import { ApiError, invalid } from './errors.js';

/**
 * The ID of a site being created: it becomes part of a Temporal task queue, a workflow ID and a NetBox slug, so it
 * must be a DNS label (the pattern is documented in the OpenAPI schema of the create field only).
 */
export const newSiteId = z.string().regex(SITE_ID_PATTERN, `must be ${SITE_ID_RULE}`);

/** NetBox's slug length: no site ID, mirrored or registered by hand, is longer. */
const SITE_ID_MAX = 100;

/**
 * An existing site's ID (a path, a filter, a reference in a body). Sites registered or mirrored before the DNS-label
 * rule keep their IDs, so a reference is not held to it: one that names no site is a 404 or a 400 where it is used.
 */
export const siteId = z
  .string()
  .min(1, 'must not be empty')
  .max(SITE_ID_MAX, `must be at most ${SITE_ID_MAX} characters`);

/** C0 controls (NUL included), DEL and C1 controls: no identifier, name or filter of the API holds one. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/;

/** The first string (or object key) under `value` that holds a control character, as its field path. */
function controlCharacterAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return controlCharacter.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = controlCharacterAt(item, `${path}.${i}`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (controlCharacter.test(key)) return path;
      const found = controlCharacterAt(item, `${path}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Parses one part of a request (body, query, params, a header) and answers 400
 * naming every bad field, e.g. `body.action`. Control characters are refused in every
 * string first, whatever the schema: Postgres cannot store a NUL, and none belongs in a request.
 */
export function parse<S extends z.ZodType>(schema: S, value: unknown, part: string): z.infer<S> {
  const badField = controlCharacterAt(value, part);
  if (badField) throw invalid(badField, 'must not contain control characters (such as NUL)');
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const details = r.error.issues.map((i) => ({
    field: [part, ...i.path.map(String)].join('.'),
    issue: i.message,
  }));
  throw new ApiError('INVALID_ARGUMENT', details.map((d) => `${d.field}: ${d.issue}`).join('; '), details);
}
