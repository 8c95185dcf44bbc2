import type { Stack } from '../../test/harness/stack.js';

/** Redfish requests the stack's simulated BMCs have received so far, over every simulator process. */
export async function bmcRequests(stack: Stack): Promise<number> {
  let n = 0;
  for (const url of new Set([stack.simAdminUrl, ...stack.simAdminUrls.values()]))
    n += ((await (await fetch(`${url}/stats`)).json()) as { requests: number }).requests;
  return n;
}
