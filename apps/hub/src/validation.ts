import type { z } from 'zod';
import { ApiError } from './errors.js';

/**
 * Parses one part of a request (body, query, params, a header) and answers 400
 * naming every bad field, e.g. `body.action`.
 */
export function parse<S extends z.ZodType>(schema: S, value: unknown, part: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const details = r.error.issues.map((i) => ({
    field: [part, ...i.path.map(String)].join('.'),
    issue: i.message,
  }));
  throw new ApiError('INVALID_ARGUMENT', details.map((d) => `${d.field}: ${d.issue}`).join('; '), details);
}
