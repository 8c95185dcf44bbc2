import { getRack, rackDevices, type Db } from '@fleet/db';
import type { z } from 'zod';
import type { ColdRebootOverrides, RackPowerOp } from '@fleet/domain';
import type { TwoPersonRule } from '../config.js';
import { ApiError } from '../errors.js';
import type { OverrideQuarantine } from '../hold-override.js';
import type { Gate, Outcome } from './approvals.service.js';
import type { Caller } from './caller.js';
import { createParentJob } from './parent-jobs.service.js';

export type RackSequenceInput = { rack_id: string; override_quarantine?: OverrideQuarantine | undefined } & (
  { kind: 'rack.power'; op: RackPowerOp } | { kind: 'rack.cold_reboot'; timings: z.infer<typeof ColdRebootOverrides> }
);

/** The two-person rule a rack sequence falls under: any that cuts power (off, cycle, a cold reboot). */
function ruleOf(input: RackSequenceInput): TwoPersonRule | undefined {
  if (input.kind === 'rack.cold_reboot') return 'rack.cold_reboot';
  return input.op === 'on' ? undefined : 'rack.power_off';
}

/**
 * A rack sequence (ordered power, cold reboot): every device of the rack or none, one workflow drives them all. A
 * cold reboot needs a power shelf, a compute tray and a switch tray.
 */
export async function rackSequence(db: Db, caller: Caller, gate: Gate, input: RackSequenceInput): Promise<Outcome> {
  const rack = await getRack(db, input.rack_id);
  if (!rack) throw new ApiError('NOT_FOUND', `rack ${input.rack_id} does not exist`);
  const devices = await rackDevices(db, rack.id);
  if (input.kind === 'rack.cold_reboot') {
    const has = (prefix: string) => devices.some((d) => d.nodeType?.startsWith(prefix));
    const missing = [
      ['powershelf_', 'power shelf'],
      ['compute_', 'compute tray'],
      ['switch_', 'switch tray'],
    ]
      .filter(([p]) => !has(p!))
      .map(([, n]) => n);
    if (missing.length)
      throw new ApiError(
        'FAILED_PRECONDITION',
        `a cold reboot needs at least one power shelf, compute tray and switch tray; rack ${rack.name} ` +
          `has no ${missing.join(', ')}`,
      );
  }
  const target = `rack/${rack.id}`;
  const rule = ruleOf(input);
  const passed = await gate.pass(
    db,
    caller,
    rule ? { rule, jobKind: input.kind, target, input: { ...input } } : undefined,
  );
  if ('approval' in passed) return passed;
  const params = input.kind === 'rack.power' ? { op: input.op } : { timings: input.timings };
  const { job } = await createParentJob(db, caller, {
    parent: { kind: input.kind, siteId: rack.siteId, rackId: rack.id, params },
    devices,
    childParams: () => ({ sequence: input.kind }),
    allOrNothing: true,
    childWorkflows: false,
    action: input.kind,
    target,
    overrideQuarantine: input.override_quarantine,
    ...passed.options,
  });
  return { job };
}
