import {
  getDevice,
  getDeviceHealth,
  healthForRules,
  recentAutomaticRemediations,
  stateBeforeQuarantine,
  type Db,
  type Device,
  type Job,
} from '@fleet/db';
import {
  blastRadiusExceeded,
  defaultPlaybooks,
  matchingRule,
  restoreStateFor,
  roleOfNodeType,
  type FaultClass,
  type FleetLifecycleState,
  type HealthFault,
  type Playbook,
} from '@fleet/domain';
import type { RemediationConfig } from '../config.js';
import { ApiError, notFound } from '../errors.js';
import type { Gate, Outcome } from './approvals.service.js';
import type { Caller } from './caller.js';
import { createJob } from './jobs.service.js';

/** States in which nothing but remediation acts on the device (docs/day2.md). */
const held: readonly FleetLifecycleState[] = ['quarantined', 'remediating', 'rma'];

/** The playbook for a fault on a node type: the config's for that type, else its role's default. */
export function playbookFor(config: RemediationConfig, nodeType: string | null, faultClass: FaultClass): Playbook {
  const own = nodeType ? config.playbooks[nodeType as keyof typeof config.playbooks]?.[faultClass] : undefined;
  const role = nodeType ? roleOfNodeType(nodeType) : undefined;
  return own ?? (role && defaultPlaybooks[role][faultClass]) ?? { steps: [] };
}

/** Where a release or a successful remediation returns the device. */
async function returnTo(db: Db, device: Device): Promise<FleetLifecycleState> {
  if (device.fleetLifecycle !== 'quarantined') return restoreStateFor(device.fleetLifecycle);
  return restoreStateFor((await stateBeforeQuarantine(db, device.id)) ?? 'discovered');
}

/** The fault a remediation is for: the operator's class, else the device's last reading's worst fault. */
async function faultOf(db: Db, device: Device, faultClass?: FaultClass): Promise<HealthFault> {
  const reading = await getDeviceHealth(db, device.id);
  const faults = reading?.faults ?? [];
  const found = faultClass
    ? faults.find((f) => f.class === faultClass)
    : (faults.find((f) => f.severity === 'Critical') ?? faults[0]);
  if (found) return found;
  if (faultClass)
    return { class: faultClass, component: 'device', severity: 'Critical', message: 'named by the operator' };
  throw new ApiError(
    'FAILED_PRECONDITION',
    `device ${device.name} has no observed fault to remediate; name one (fault_class)`,
    [{ field: 'body.fault_class', issue: 'required when the device has no observed fault' }],
  );
}

function refuseUnlessMovable(device: Device, what: string): void {
  if (device.fleetLifecycle === 'rma' || device.fleetLifecycle === 'decommissioned')
    throw new ApiError('CONFLICT', `device ${device.name} is ${device.fleetLifecycle}: it cannot be ${what}`);
}

/** An operator holds a device, and optionally runs its fault's playbook (no blast-radius gate: a person decided). */
export async function quarantineDevice(
  db: Db,
  caller: Caller,
  config: RemediationConfig,
  device: Device,
  req: { reason: string; remediate: boolean; faultClass?: FaultClass | undefined },
): Promise<Job> {
  refuseUnlessMovable(device, req.remediate ? 'remediated' : 'quarantined');
  const already = device.fleetLifecycle === 'quarantined';
  if (!req.remediate && held.includes(device.fleetLifecycle))
    throw new ApiError('CONFLICT', `device ${device.name} is already ${device.fleetLifecycle}`);
  if (req.remediate && device.fleetLifecycle === 'remediating')
    throw new ApiError('CONFLICT', `device ${device.name} is being remediated already`);
  const fault = req.remediate ? await faultOf(db, device, req.faultClass) : undefined;
  const kind = req.remediate ? 'device.remediate' : 'device.quarantine';
  const params = {
    reason: req.reason,
    ...(fault ? { fault, playbook: playbookFor(config, device.nodeType, fault.class) } : {}),
    return_to: await returnTo(db, device),
    already_quarantined: already,
  };
  const { job } = await createJob(db, caller, {
    job: { kind, siteId: device.siteId, deviceId: device.id, rackId: device.rackId, params },
    action: `device.${req.remediate ? 'remediate' : 'quarantine'}`,
    target: `device/${device.id}`,
  });
  return job;
}

export interface ReleaseInput {
  device_id: string;
  reason: string;
}

/** An operator lets a held device go: a health check, then back where it was; two-person rule device.release. */
export async function releaseDevice(db: Db, caller: Caller, gate: Gate, input: ReleaseInput): Promise<Outcome> {
  const device = await getDevice(db, input.device_id);
  if (!device) throw notFound('device', input.device_id);
  if (device.deletedAt)
    throw new ApiError('FAILED_PRECONDITION', `device ${device.name} was deleted from the inventory`);
  if (device.fleetLifecycle !== 'quarantined')
    throw new ApiError(
      'CONFLICT',
      `device ${device.name} is ${device.fleetLifecycle}, not quarantined: nothing to release`,
    );
  const target = `device/${device.id}`;
  const passed = await gate.pass(db, caller, {
    rule: 'device.release',
    jobKind: 'device.release',
    target,
    input: { ...input },
  });
  if ('approval' in passed) return passed;
  const { job } = await createJob(db, caller, {
    job: {
      kind: 'device.release',
      siteId: device.siteId,
      deviceId: device.id,
      rackId: device.rackId,
      params: { reason: input.reason, return_to: await returnTo(db, device), already_quarantined: true },
    },
    action: 'device.release',
    target,
    ...passed.options,
  });
  return { job };
}

export interface RuleOutcome {
  deviceId: string;
  rule: string;
  jobId?: string;
  /** Why the remediation waits for an operator (the blast radius), or why no job was made. */
  note?: string;
}

/**
 * The quarantine rules on a site's readings that name a fault (docs/day2.md): a device whose fault the readings have
 * confirmed as often and as quickly as a rule asks is quarantined, and remediated when the rule says so; past the
 * site's blast radius the remediation waits for an operator's approval, with the reason in the job. A device already
 * held, or busy with another job, is left alone (the next confirmed reading tries again). One satellite delivers a
 * site's readings one batch at a time, so the blast radius is counted without racing another batch of the site.
 */
export async function applyQuarantineRules(
  db: Db,
  caller: Caller,
  config: RemediationConfig,
  siteId: string,
  faultyDeviceIds: string[],
  log: { warn(o: object, msg: string): void; info(o: object, msg: string): void },
): Promise<RuleOutcome[]> {
  const outcomes: RuleOutcome[] = [];
  const candidates = (await healthForRules(db, faultyDeviceIds)).filter((d) => !held.includes(d.lifecycle));
  if (candidates.length === 0) return outcomes;
  const since = new Date(Date.now() - config.blastRadius.windowS * 1000);
  const recent = await recentAutomaticRemediations(db, siteId, since);
  for (const d of candidates) {
    const spanS = (d.observedAt.getTime() - d.changedAt.getTime()) / 1000;
    const reading = { reachable: d.reachable, faults: d.faults };
    const match = matchingRule(config.rules, reading, d.observations, spanS);
    if (!match || d.lifecycle === 'decommissioned') continue;
    const { rule, fault } = match;
    const next = { deviceId: d.deviceId, rackId: d.rackId };
    const gate = rule.remediate ? blastRadiusExceeded(config.blastRadius, recent, next, siteId) : undefined;
    const seen = `${fault.class} on ${fault.component} seen ${d.observations} time(s)`;
    const reason = `rule ${rule.name}: ${seen}: ${fault.message}`;
    const lifecycle = d.lifecycle;
    const params = {
      reason,
      rule: rule.name,
      ...(rule.remediate ? { fault, playbook: playbookFor(config, d.nodeType, fault.class) } : {}),
      ...(gate ? { await_approval: gate } : {}),
      return_to: restoreStateFor(lifecycle),
      already_quarantined: false,
    };
    try {
      const { job } = await createJob(db, caller, {
        job: {
          kind: rule.remediate ? 'device.remediate' : 'device.quarantine',
          siteId,
          deviceId: d.deviceId,
          rackId: d.rackId,
          params,
        },
        action: `rule.${rule.name}`,
        target: `device/${d.deviceId}`,
      });
      if (rule.remediate && !gate) recent.push(next);
      outcomes.push({ deviceId: d.deviceId, rule: rule.name, jobId: job.id, ...(gate ? { note: gate } : {}) });
      log.warn({ deviceId: d.deviceId, jobId: job.id, rule: rule.name, gate }, 'quarantine rule acted');
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'CONFLICT')) throw err;
      outcomes.push({ deviceId: d.deviceId, rule: rule.name, note: err.message });
      log.info({ deviceId: d.deviceId, rule: rule.name, err: err.message }, 'quarantine rule deferred: device busy');
    }
  }
  return outcomes;
}
