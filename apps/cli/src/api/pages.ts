import { unwrap } from '@fleet/client';
import type { Hub } from './hub.js';

export type Query = Record<string, string | number | boolean | string[] | undefined>;

interface Page<T> {
  items: T[];
  next_cursor?: string | number | null;
}

/**
 * Every page of a list route, following `next_cursor`. The next page is asked for as soon as the cursor is known,
 * so the hub works while the caller prints; at most two pages are in memory, however long the list.
 */
export async function* pages<T>(hub: Hub, path: string, query: Query, pageSize?: number): AsyncGenerator<T[]> {
  const fetchPage = (cursor: string | undefined) =>
    unwrap(
      hub.raw.GET(path, {
        params: { query: { ...query, ...(pageSize ? { limit: pageSize } : {}), ...(cursor ? { cursor } : {}) } },
      }),
    ) as Promise<Page<T>>;
  let next: Promise<Page<T>> | undefined = fetchPage(undefined);
  try {
    while (next) {
      const page: Page<T> = await next;
      next = page.next_cursor == null ? undefined : fetchPage(String(page.next_cursor));
      yield page.items;
    }
  } finally {
    // A caller that stopped early (--limit) leaves a request in flight: its answer, or failure, no longer matters.
    next?.catch(() => undefined);
  }
}

/** Items across pages, stopping after `limit` of them (all when undefined). */
export async function* items<T>(source: AsyncIterable<T[]>, limit?: number): AsyncGenerator<T[]> {
  let left = limit ?? Infinity;
  for await (const page of source) {
    const taken = page.length > left ? page.slice(0, left) : page;
    left -= taken.length;
    if (taken.length) yield taken;
    if (left <= 0) return;
  }
}
