import { listDevices, type Db, type DeviceFilters } from '@fleet/db';
import { domainsPoweredOffUnderfoot, type PowerAction } from '@fleet/domain';
import { ApiError, invalid } from '../errors.js';
import type { OverrideQuarantine } from '../hold-override.js';
import type { Gate, Outcome } from './approvals.service.js';
import type { Caller } from './caller.js';
import { createParentJob } from './parent-jobs.service.js';

const MAX_BATCH = 10_000;

/**
 * A power batch as the request chose it: the selection as given (kept on the parent job) and the device filters it
 * resolved to, the caller's site scope applied, so a held batch selects by the same rules when it is approved.
 */
export interface PowerBatchInput {
  action: PowerAction;
  selection: Record<string, unknown>;
  filters: DeviceFilters;
  rack_id?: string | undefined;
  site_id?: string | undefined;
  override_quarantine?: OverrideQuarantine | undefined;
}

/**
 * One power action on many devices: a parent job with a child per device, the devices selected when it runs (a held
 * batch selects again when approved: the fleet changed meanwhile). Anything but `on` takes hosts down, which across a
 * rack or a site is what the rack rule guards: two-person rule `batch.power_off`.
 */
export async function powerBatch(db: Db, caller: Caller, gate: Gate, input: PowerBatchInput): Promise<Outcome> {
  const devices = await listDevices(db, { limit: MAX_BATCH + 1, filters: input.filters });
  if (devices.length === 0) throw invalid('body', 'no device matches');
  if (devices.length > MAX_BATCH) throw invalid('body', `more than ${MAX_BATCH} devices match; narrow the selection`);
  const underfoot = domainsPoweredOffUnderfoot(devices, input.action);
  if (underfoot.length > 0) {
    throw new ApiError(
      'FAILED_PRECONDITION',
      `the selection holds power shelves and the trays they feed (rack ${underfoot.join(', ')}); ` +
        `'${input.action}' on both at once cuts the trays' AC in the middle of their own action: use POST ` +
        `/v1/racks/{id}/power, which orders them, or leave the shelves out`,
      underfoot.map((domain) => ({
        field: 'body',
        issue: `rack ${domain}: power shelves and fed devices selected together`,
      })),
    );
  }
  const target = input.rack_id ? `rack/${input.rack_id}` : input.site_id ? `site/${input.site_id}` : 'filter';
  const passed = await gate.pass(
    db,
    caller,
    input.action === 'on'
      ? undefined
      : { rule: 'batch.power_off', jobKind: 'batch.power', target, input: { ...input } },
  );
  if ('approval' in passed) return passed;
  const siteIds = [...new Set(devices.map((d) => d.siteId))];
  const { job } = await createParentJob(db, caller, {
    parent: {
      kind: 'batch.power',
      siteId: siteIds.length === 1 ? siteIds[0]! : null,
      rackId: input.rack_id ?? null,
      params: { action: input.action, selection: input.selection },
    },
    devices,
    childParams: () => ({ action: input.action }),
    allOrNothing: false,
    childWorkflows: true,
    action: 'batch.power',
    target,
    overrideQuarantine: input.override_quarantine,
    ...passed.options,
  });
  return { job };
}
