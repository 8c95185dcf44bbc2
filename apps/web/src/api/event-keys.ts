import type { QueryKey } from '@tanstack/react-query';
import type { ServerEvent } from './sse.js';

/**
 * The queries an event of GET /v1/events makes stale: the object's own and every list that may show it. Apart from
 * the window-bound stream (live.ts) so that node tests can check it.
 */
export function keysFor(event: ServerEvent): QueryKey[] {
  const data = parse(event.data);
  const id = typeof data['id'] === 'string' ? data['id'] : undefined;
  switch (event.event) {
    case 'job':
      return [['jobs'], ['rack-activity'], ['overview'], ...(id ? [['job', id]] : [])];
    case 'device':
      return [['devices'], ['rack'], ['overview'], ['compliance'], ...(id ? [['device', id]] : [])];
    case 'campaign':
      return [['campaigns'], ['overview'], ...(id ? [['campaign', id]] : [])];
    case 'health':
      // A health event's id is its device's.
      return id ? [['device', id, 'health']] : [];
    case 'sla_breach':
      return [['sla-breaches']];
    case 'facility_event':
      return [['facility-events']];
    case 'rma':
      // ['rma'] is the lists' and each case's prefix.
      return [['rma']];
    default:
      return [];
  }
}

function parse(data: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(data);
    if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
  } catch {
    // not JSON: the data is the id itself
  }
  return data.trim() ? { id: data.trim() } : {};
}
