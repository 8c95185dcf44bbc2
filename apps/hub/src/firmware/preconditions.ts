import type { FastifyRequest } from 'fastify';
import { HttpStatusError } from './http-status-error.js';

/** A strong entity tag for a version identifier (a revision, a digest). */
export const etag = (version: string | number) => `"${version}"`;

/** The entity tags a conditional header lists; undefined when absent or `*` (any current version). */
function listedTags(header: string | string[] | undefined): string[] | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined || value.trim() === '*') return undefined;
  return value.split(',').map((t) => t.trim().replace(/^W\//, ''));
}

/** 412 when the request's If-Match header names none of the resource's current tag; no If-Match, no condition. */
export function checkIfMatch(ifMatch: string | string[] | undefined, current: string): void {
  const tags = listedTags(ifMatch);
  if (tags && !tags.includes(current)) {
    throw new HttpStatusError(
      412,
      'FAILED_PRECONDITION',
      `If-Match ${tags.join(', ')} does not match the current version ${current}; read the resource again and retry`,
      [{ field: 'header.If-Match', issue: `current ETag is ${current}` }],
    );
  }
}

/** True when If-None-Match already names the current tag: the client's copy is fresh (304). */
export function isNotModified(request: FastifyRequest, current: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  return header.trim() === '*' || (listedTags(header)?.includes(current) ?? false);
}
