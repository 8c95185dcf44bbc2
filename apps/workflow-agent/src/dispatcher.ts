import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { errorText } from '@fleet/config';
import {
  cancelIfNotStarted,
  childrenOf,
  getDevice,
  getCampaignRow,
  getDevicesByIds,
  getFirmwarePackage,
  resolveManifests,
  siteMaintenanceWindows,
  leaseDueIntents,
  markIntentDispatched,
  markIntentFailed,
  markIntentRetry,
  nvosCredentialSharing,
  setJobState,
  type Db,
  type Intent,
  type Job,
  type ResolvedManifest,
} from '@fleet/db';
import {
  isNvosImage,
  roleOfNodeType,
  siteTaskQueue,
  switchFirmwareComponents,
  workflowTypeFor,
  type CampaignDeviceInput,
} from '@fleet/domain';
import { saDeviceId, saJobKind, saSiteId } from '@fleet/temporal';
import type { AgentConfig } from './config.js';
import type { AgentMetrics } from './metrics.js';
import {
  bmcResetInput,
  coldRebootInput,
  firmwareCampaignInput,
  firmwareUpdateInput,
  devicePowerInput,
  deviceTarget,
  nvosInstallInput,
  nvosTarget,
  powerRefreshInput,
  rackPowerInput,
  rackTargets,
  switchOperationInput,
} from './workflow-input.js';

/** An intent that can never be carried out (its job fails); anything else is retried. */
class PermanentIntentError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A signal whose workflow has ended: the intent fails, the job is left as it is. */
class SignalVoidError extends Error {}

export interface DispatcherDeps {
  db: Db;
  client: Client;
  config: AgentConfig;
  log: Logger;
  metrics: AgentMetrics;
}

const PARALLEL_STARTS = 32;

/**
 * Turns leased intents into Temporal calls. The workflow ID is the job ID, so a
 * start repeated after a crash or a lost reply finds the existing workflow and
 * never runs the work twice. Returns how many intents it handled.
 */
export async function dispatchOnce(deps: DispatcherDeps): Promise<number> {
  const { db, config } = deps;
  const leased = await leaseDueIntents(db, config.dispatch.batchSize, config.dispatch.leaseS);
  // Starts run in parallel; a cancel waits for any start of the same job in this batch.
  const starts = leased.filter((i) => i.kind === 'start');
  for (let i = 0; i < starts.length; i += PARALLEL_STARTS) {
    await Promise.all(starts.slice(i, i + PARALLEL_STARTS).map((intent) => handle(deps, intent)));
  }
  for (const intent of leased.filter((i) => i.kind !== 'start')) await handle(deps, intent);
  return leased.length;
}

async function handle(deps: DispatcherDeps, intent: Intent & { job: Job }): Promise<void> {
  const { db, log, metrics, config } = deps;
  const ilog = log.child({ jobId: intent.jobId, workflowId: intent.jobId, intent: intent.kind });
  try {
    if (intent.kind === 'start') await start(deps, intent.job);
    else if (intent.kind === 'cancel') await cancel(deps, intent.job);
    else if (intent.kind === 'signal') await signal(deps, intent);
    else throw new PermanentIntentError('INVALID_ARGUMENT', `unknown intent kind ${intent.kind}`);
    await markIntentDispatched(db, intent.id);
    metrics.intentsDispatched.inc({ kind: intent.kind });
    ilog.debug('intent dispatched');
  } catch (err) {
    // Logged and stored on the intent: never err.message itself, which for a drizzle error holds the statement's
    // values.
    const message = errorText(err);
    if (err instanceof SignalVoidError) {
      ilog.warn({ err: message }, 'signal for an ended workflow dropped');
      await markIntentFailed(db, intent.id, message);
      return;
    }
    if (err instanceof PermanentIntentError) {
      metrics.intentErrors.inc({ kind: intent.kind, permanent: 'true' });
      ilog.error({ err: message }, 'intent cannot be carried out; job failed');
      await markIntentFailed(db, intent.id, message);
      await setJobState(db, intent.jobId, 'failed', { code: err.code, message });
      return;
    }
    metrics.intentErrors.inc({ kind: intent.kind, permanent: 'false' });
    const retryInS = Math.min(config.dispatch.maxRetryS, 2 ** Math.min(intent.attempts, 10));
    ilog.warn({ err: message, retryInS, attempts: intent.attempts }, 'Temporal did not take the intent; will retry');
    await markIntentRetry(db, intent.id, message, retryInS);
  }
}

/** The workflow type and input for a job; IDs and references only, never secrets. */
async function workflowFor(deps: DispatcherDeps, job: Job): Promise<{ type: string; input: unknown }> {
  const { db, config } = deps;
  if (job.kind === 'device.power') {
    if (!job.deviceId) throw new PermanentIntentError('INVALID_ARGUMENT', 'device job without a device');
    const device = await getDevice(db, job.deviceId);
    if (!device) throw new PermanentIntentError('NOT_FOUND', `device ${job.deviceId} no longer exists`);
    const input = devicePowerInput(job, device, config.power);
    if (Array.isArray(input))
      throw new PermanentIntentError(
        'FAILED_PRECONDITION',
        `device ${device.name} has no ${input.join(', ')} in the inventory`,
      );
    return { type: workflowTypeFor['device.power'], input };
  }
  if (job.kind === 'device.bmc_reset' || job.kind === 'device.power_refresh') {
    const device = job.deviceId ? await getDevice(db, job.deviceId) : undefined;
    if (!device) throw new PermanentIntentError('NOT_FOUND', `device ${job.deviceId} no longer exists`);
    const target = deviceTarget(device);
    if (Array.isArray(target))
      throw new PermanentIntentError(
        'FAILED_PRECONDITION',
        `device ${device.name} has no ${target.join(', ')} in the inventory`,
      );
    return job.kind === 'device.bmc_reset'
      ? { type: workflowTypeFor['device.bmc_reset'], input: bmcResetInput(job, target, config.power) }
      : { type: workflowTypeFor['device.power_refresh'], input: powerRefreshInput(job, target, config.power) };
  }
  if (job.kind === 'rack.power' || job.kind === 'rack.cold_reboot') {
    const children = await childrenOf(db, job.id);
    const targets = rackTargets(await getDevicesByIds(db, children.map((c) => c.deviceId!).filter(Boolean)));
    if (Array.isArray(targets))
      throw new PermanentIntentError('FAILED_PRECONDITION', `rack devices cannot be operated: ${targets.join('; ')}`);
    return job.kind === 'rack.power'
      ? { type: workflowTypeFor['rack.power'], input: rackPowerInput(job, targets, config.power) }
      : { type: workflowTypeFor['rack.cold_reboot'], input: coldRebootInput(job, targets, config.power) };
  }
  if (job.kind === 'device.firmware_update' || job.kind === 'device.firmware_refresh') {
    const device = job.deviceId ? await getDevice(db, job.deviceId) : undefined;
    if (!device) throw new PermanentIntentError('NOT_FOUND', `device ${job.deviceId} no longer exists`);
    const target = deviceTarget(device);
    if (Array.isArray(target))
      throw new PermanentIntentError(
        'FAILED_PRECONDITION',
        `device ${device.name} has no ${target.join(', ')} in the inventory`,
      );
    if (job.kind === 'device.firmware_refresh')
      return { type: workflowTypeFor['device.firmware_refresh'], input: powerRefreshInput(job, target, config.power) };
    const manifestId = String(job.params['manifest_id'] ?? '');
    const manifest = (await resolveManifests(db, [manifestId])).get(manifestId);
    if (!manifest)
      throw new PermanentIntentError(
        'FAILED_PRECONDITION',
        `manifest ${manifestId} or one of its packages no longer exists`,
      );
    return {
      type: workflowTypeFor['device.firmware_update'],
      input: firmwareUpdateInput(job, target, roleOfNodeType(target.nodeType), manifest, config),
    };
  }
  if (job.kind === 'firmware.campaign')
    return { type: workflowTypeFor['firmware.campaign'], input: await campaignInput(deps, job) };
  if (job.kind === 'switch.nvos_install') {
    const device = job.deviceId ? await getDevice(db, job.deviceId) : undefined;
    if (!device) throw new PermanentIntentError('NOT_FOUND', `device ${job.deviceId} no longer exists`);
    const target = nvosTarget(device);
    if (Array.isArray(target))
      throw new PermanentIntentError(
        'FAILED_PRECONDITION',
        `device ${device.name} has no ${target.join(', ')} in the inventory`,
      );
    const packageId = String(job.params['package_id'] ?? '');
    const image = await getFirmwarePackage(db, packageId);
    if (!image) throw new PermanentIntentError('FAILED_PRECONDITION', `package ${packageId} no longer exists`);
    if (!isNvosImage(image.metadata))
      throw new PermanentIntentError('FAILED_PRECONDITION', `package ${image.fileName} is not an NVOS image`);
    return {
      type: workflowTypeFor['switch.nvos_install'],
      input: nvosInstallInput(job, target, image, image.metadata.buildId, config),
    };
  }
  if (
    job.kind === 'switch.password_rotation' ||
    job.kind === 'switch.factory_reset' ||
    job.kind === 'switch.certificate_install' ||
    job.kind === 'switch.firmware_update'
  ) {
    const device = job.deviceId ? await getDevice(db, job.deviceId) : undefined;
    if (!device) throw new PermanentIntentError('NOT_FOUND', `device ${job.deviceId} no longer exists`);
    const target = nvosTarget(device);
    if (Array.isArray(target))
      throw new PermanentIntentError(
        'FAILED_PRECONDITION',
        `device ${device.name} has no ${target.join(', ')} in the inventory`,
      );
    if (job.kind === 'switch.password_rotation') {
      // The hub checked when the request arrived; a NetBox sync since may have given the reference to another login.
      const shared = await nvosCredentialSharing(db, device);
      if (shared) throw new PermanentIntentError('FAILED_PRECONDITION', shared);
    }
    let manifest: ResolvedManifest | undefined;
    if (job.kind === 'switch.firmware_update') {
      const manifestId = String(job.params['manifest_id'] ?? '');
      manifest = (await resolveManifests(db, [manifestId])).get(manifestId);
      if (!manifest)
        throw new PermanentIntentError(
          'FAILED_PRECONDITION',
          `manifest ${manifestId} or one of its packages no longer exists`,
        );
    }
    return { type: workflowTypeFor[job.kind], input: switchOperationInput(job, target, config, manifest) };
  }
  throw new PermanentIntentError('INVALID_ARGUMENT', `no workflow for job kind ${job.kind}`);
}

/**
 * A campaign's input: its devices as BMC targets with their plan placement, and every
 * manifest resolved once. Devices the inventory can no longer operate fail up front.
 */
async function campaignInput(deps: DispatcherDeps, job: Job) {
  const { db, config } = deps;
  const campaign = await getCampaignRow(db, job.id);
  if (!campaign) throw new PermanentIntentError('NOT_FOUND', `campaign ${job.id} has no plan`);
  const manifests = await resolveManifests(
    db,
    campaign.plan.devices.map((d) => d.manifestId),
  );
  const rows = new Map(
    (
      await getDevicesByIds(
        db,
        campaign.plan.devices.map((d) => d.deviceId),
      )
    ).map((d) => [d.id, d]),
  );
  const devices: CampaignDeviceInput[] = [];
  for (const p of campaign.plan.devices) {
    const row = rows.get(p.deviceId);
    const target = row ? deviceTarget(row) : ['device'];
    const problem = Array.isArray(target)
      ? `no ${target.join(', ')} in the inventory`
      : !manifests.has(p.manifestId)
        ? `manifest ${p.manifestId} or a package of it is gone`
        : undefined;
    if (problem || Array.isArray(target)) {
      await setJobState(db, p.jobId, 'failed', { code: 'FAILED_PRECONDITION', message: `${p.name}: ${problem}` });
      continue;
    }
    const role = roleOfNodeType(p.nodeType);
    const nvos =
      role === 'switch' && isSwitchComponentManifest(manifests.get(p.manifestId)!) ? nvosTarget(row!) : undefined;
    if (Array.isArray(nvos)) {
      await setJobState(db, p.jobId, 'failed', {
        code: 'FAILED_PRECONDITION',
        message: `${p.name}: no ${nvos.join(', ')} in the inventory for a switch firmware update`,
      });
      continue;
    }
    devices.push({
      deviceId: p.deviceId,
      jobId: p.jobId,
      rackId: p.rackId,
      powerDomain: p.powerDomain,
      nodeType: p.nodeType,
      manifestId: p.manifestId,
      target,
      role,
      ...(nvos ? { nvos } : {}),
    });
  }
  return firmwareCampaignInput(
    job,
    campaign,
    devices,
    manifests,
    await siteMaintenanceWindows(db, campaign.siteId),
    config,
  );
}

/** Signals go to running workflows only: before the start is dispatched they wait, after the end they are void. */
async function signal(deps: DispatcherDeps, intent: Intent & { job: Job }): Promise<void> {
  const name = intent.payload?.signal;
  if (!name) throw new PermanentIntentError('INVALID_ARGUMENT', 'signal intent without a signal');
  try {
    deps.metrics.temporalCalls.inc({ op: 'signal' });
    await deps.client.workflow.getHandle(intent.jobId).signal(name);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    if (intent.job.state === 'queued') throw new Error(`workflow ${intent.jobId} not started yet`, { cause: err });
    throw new SignalVoidError(`workflow ${intent.jobId} has ended; ${name} not delivered`, { cause: err });
  }
}

async function start(deps: DispatcherDeps, job: Job): Promise<void> {
  const { client, metrics } = deps;
  if (job.state !== 'queued') return; // cancelled before it ever started
  if (!job.siteId) throw new PermanentIntentError('INVALID_ARGUMENT', 'job without a site');
  const { type, input } = await workflowFor(deps, job);
  try {
    metrics.temporalCalls.inc({ op: 'start' });
    await client.workflow.start(type, {
      workflowId: job.id,
      taskQueue: siteTaskQueue(job.siteId),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: saJobKind, value: job.kind },
        { key: saSiteId, value: job.siteId },
        ...(job.deviceId ? [{ key: saDeviceId, value: job.deviceId }] : []),
      ],
    });
  } catch (err) {
    // Started before (a retry after a crash or a lost answer): the workflow is running or done.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

async function cancel(deps: DispatcherDeps, job: Job): Promise<void> {
  const { db, client, metrics } = deps;
  // A job whose start was never dispatched is cancelled here, without Temporal.
  if (await cancelIfNotStarted(db, job.id)) return;
  try {
    metrics.temporalCalls.inc({ op: 'cancel' });
    await client.workflow.getHandle(job.id).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/** A manifest whose steps are NVUE platform components (bmc, erot, …) updates a switch over NVOS. */
function isSwitchComponentManifest(m: ResolvedManifest): boolean {
  return m.steps.every((s) => (switchFirmwareComponents as readonly string[]).includes(s.name));
}
