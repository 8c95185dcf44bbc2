import { useInfiniteQuery } from '@tanstack/react-query';
import { unwrap, type paths } from '@fleet/client';
import { api } from './client';

type AuditQuery = NonNullable<paths['/v1/audit']['get']['parameters']['query']>;
export type AuditFilter = Omit<AuditQuery, 'limit' | 'cursor'>;
export type AuditEntry = paths['/v1/audit']['get']['responses'][200]['content']['application/json']['items'][number];

export const auditPageSize = 50;

/** The audit log matching `filter`, newest first, a page at a time ("Load more" follows the cursor). */
export const useAuditLog = (filter: AuditFilter) =>
  useInfiniteQuery({
    queryKey: ['audit', filter],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam, signal }) =>
      unwrap(
        api().GET('/v1/audit', { params: { query: { ...filter, limit: auditPageSize, cursor: pageParam } }, signal }),
      ),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    // The event stream carries no audit rows, so the log polls whether or not the stream is open.
    refetchInterval: 30_000,
  });
