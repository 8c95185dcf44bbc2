import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Connection } from '@temporalio/client';
import { searchAttributes } from '@fleet/domain';

export const saJobKind = defineSearchAttributeKey(searchAttributes.jobKind.name, SearchAttributeType.KEYWORD);
export const saSiteId = defineSearchAttributeKey(searchAttributes.siteId.name, SearchAttributeType.KEYWORD);
export const saDeviceId = defineSearchAttributeKey(searchAttributes.deviceId.name, SearchAttributeType.KEYWORD);

/** `--search-attribute` flags for `temporal server start-dev`. */
export function devServerSearchAttributeFlags(): string[] {
  return Object.values(searchAttributes).flatMap((a) => ['--search-attribute', `${a.name}=${a.type}`]);
}

/** Registers the project's search attributes on a namespace; already-present ones are left alone. */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(searchAttributes).filter((a) => !(a.name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    // IndexedValueType: KEYWORD = 2
    searchAttributes: Object.fromEntries(missing.map((a) => [a.name, 2])),
  });
}
