import { z } from 'zod';
import { rackDevices, resolveDefaultManifests, type Device } from '@fleet/db';
import {
  burnInTestTable,
  faultClasses,
  fleetLifecycleStates,
  isHeld,
  kindOfNodeType,
  playbookSteps,
  type AcCyclePlan,
  type BmcTarget,
  type PlaybookStep,
  type ReflashPlan,
  type RemediationBurnIn,
  type RemediationInput,
  type RemediationMode,
} from '@fleet/domain';
import { MissingInventoryError, PermanentIntentError } from './errors.js';
import { activityOf, firmwareTimings, loadDevice } from './shared.js';
import { deviceTarget, unlessMissing } from './targets.js';
import type { InputLoader, LoaderDeps } from './types.js';

/** What the hub writes into a quarantine, remediation or release job (services/remediation.service.ts). */
const RemediationParams = z.object({
  reason: z.string().min(1),
  rule: z.string().optional(),
  fault: z
    .object({
      class: z.enum(faultClasses),
      component: z.string(),
      severity: z.enum(['Warning', 'Critical']),
      message: z.string(),
    })
    .optional(),
  playbook: z.object({ steps: z.array(z.enum(playbookSteps)) }).optional(),
  await_approval: z.string().optional(),
  return_to: z.enum(fleetLifecycleStates),
  already_quarantined: z.boolean(),
  rma_case_id: z.uuid().optional(),
});

type RemediationKind =
  'device.quarantine' | 'device.remediate' | 'device.release' | 'device.rma_ship' | 'device.rma_return';

const modes: Record<RemediationKind, RemediationMode> = {
  'device.quarantine': 'quarantine',
  'device.remediate': 'remediate',
  'device.release': 'release',
  'device.rma_ship': 'rma_ship',
  'device.rma_return': 'rma_return',
};

/** A quarantine, remediation or release of one device: the hub decided the playbook and the gate; timings are ours. */
export function remediationInput<K extends RemediationKind>(kind: K): InputLoader<K> {
  return async (deps, job) => {
    const parsed = RemediationParams.safeParse(job.params);
    if (!parsed.success)
      throw new PermanentIntentError('INVALID_ARGUMENT', `${kind} job params: ${parsed.error.issues[0]?.message}`);
    const p = parsed.data;
    if (kind === 'device.remediate' && !p.fault)
      throw new PermanentIntentError('INVALID_ARGUMENT', 'a remediation job names the fault it is for');
    const device = await loadDevice(deps, job);
    const target = deviceTarget(device);
    const has = (step: PlaybookStep) => p.playbook?.steps.includes(step) ?? false;
    const [acCycle, firmware] = await Promise.all([
      has('ac_cycle') ? acCyclePlan(deps, device) : undefined,
      has('firmware_reflash') ? reflashPlan(deps, target) : undefined,
    ]);
    const burnIn = has('burn_in') ? burnInOf(deps, device, target) : undefined;
    const input: RemediationInput = {
      jobId: job.id,
      mode: modes[kind],
      target,
      deviceName: device.name,
      ...(job.siteId ? { siteId: job.siteId } : {}),
      ...(acCycle ? { acCycle } : {}),
      ...(firmware ? { firmware } : {}),
      ...(burnIn ? { burnIn } : {}),
      reason: p.reason,
      ...(p.rule ? { rule: p.rule } : {}),
      ...(p.fault ? { fault: p.fault } : {}),
      ...(p.playbook ? { playbook: p.playbook } : {}),
      ...(p.await_approval ? { awaitApproval: p.await_approval } : {}),
      ...(p.rma_case_id ? { rmaCaseId: p.rma_case_id } : {}),
      returnTo: p.return_to,
      alreadyQuarantined: p.already_quarantined,
      verifyTimeoutS: deps.config.remediation.verifyTimeoutS,
      verifyPollS: deps.config.remediation.verifyPollS,
      activity: activityOf(deps.config.power),
    };
    return input;
  };
}

/**
 * The shelves that feed the device and the devices they also feed (docs/day2.md, "AC cycle"). An NVL72 rack's
 * shelves share one busbar, so every shelf of the rack feeds every tray: the plan lists them all, and every other
 * Fleet-managed device of the rack that is not held, which the step then requires to be Off. Devices without a node
 * type are not on the busbar as far as Fleet knows (patch panels, a top-of-rack switch on the PDUs).
 */
async function acCyclePlan({ db, config }: LoaderDeps, device: Device): Promise<AcCyclePlan> {
  const plan: AcCyclePlan = {
    shelves: [],
    others: [],
    offFloorS: config.remediation.acOffFloorS,
    pollIntervalS: config.remediation.acPollS,
  };
  const refused = (why: string): AcCyclePlan => ({ ...plan, shelves: [], others: [], refused: why });
  if (kindOfNodeType(device.nodeType) === 'power_shelf')
    return refused(`${device.name} is a power shelf: no shelf feeds it`);
  if (!device.rackId) return refused(`${device.name} is in no rack: no power shelf feeds it`);
  const problems: string[] = [];
  for (const d of await rackDevices(db, device.rackId)) {
    if (d.id === device.id || !d.nodeType) continue;
    const shelf = kindOfNodeType(d.nodeType) === 'power_shelf';
    if (!shelf && isHeld(d.fleetLifecycle)) continue;
    const t = unlessMissing(() => deviceTarget(d));
    if (t instanceof MissingInventoryError) {
      problems.push(`${d.name} (no ${t.missing.join(', ')})`);
      continue;
    }
    if (shelf) plan.shelves.push(t);
    else plan.others.push({ target: t, name: d.name });
  }
  if (!plan.shelves.length) return refused(`no power shelf in ${device.name}'s rack feeds it`);
  if (problems.length)
    return refused(`devices on the same shelves cannot be operated or checked: ${problems.join(', ')}`);
  return plan;
}

/** The node type's default manifest: what the compliance view and campaigns hold the device to. */
async function reflashPlan({ db, config }: LoaderDeps, target: BmcTarget): Promise<ReflashPlan | undefined> {
  const manifest = (await resolveDefaultManifests(db, [target.nodeType])).get(target.nodeType);
  const role = kindOfNodeType(target.nodeType);
  if (!manifest || !role) return undefined;
  return {
    manifestId: manifest.id,
    role,
    steps: manifest.steps,
    expectedInventory: manifest.expectedInventory,
    timings: firmwareTimings(config.firmware),
  };
}

/** The enrolment's burn-in tests that run on one tray (a rack test needs the rack's whole NVLink domain). */
function burnInOf({ config }: LoaderDeps, device: Device, target: BmcTarget): RemediationBurnIn | undefined {
  if (kindOfNodeType(target.nodeType) !== 'compute') return undefined;
  const e = config.enrolment;
  return {
    name: device.name,
    tests: e.burnInTests.filter((t) => burnInTestTable[t].scope === 'tray'),
    startToCloseS: e.burnInTimeoutS,
    heartbeatTimeoutS: e.burnInHeartbeatTimeoutS,
    settleTimeoutS: config.power.settleTimeoutS,
  };
}
