import {
  getJob,
  getSite,
  insertIntent,
  notifyIntent,
  replaceMaintenanceWindows,
  requestJobCancel,
  type Db,
  type DbOrTx,
  type Job,
} from '@fleet/db';
import { isTerminal, type CampaignSignal, type JobState, type MaintenanceWindowSpec } from '@fleet/domain';
import { windowsView } from '../campaigns/views.js';
import { ApiError, notFound } from '../errors.js';
import { checkIfMatch } from '../firmware/preconditions.js';
import type { TwoPersonConfig } from '../config.js';
import { checkCampaignApprover } from './approvals.service.js';
import { auditAccepted, type Caller } from './caller.js';

/** The job of a firmware campaign; 404 for any other id. */
export async function campaignJob(db: DbOrTx, id: string): Promise<Job> {
  const job = await getJob(db, id);
  if (job?.kind !== 'firmware.campaign') throw notFound('firmware campaign', id);
  return job;
}

/**
 * A pause, resume, approve or cancel: refused once the campaign has ended; the change and its audit row in one
 * transaction. Answers the campaign's job as it is afterwards.
 */
async function actOnCampaign(
  db: Db,
  caller: Caller,
  id: string,
  action: CampaignSignal | 'cancel',
  write: (tx: DbOrTx) => Promise<unknown>,
  check?: (job: Job) => void,
): Promise<Job> {
  const job = await campaignJob(db, id);
  if (isTerminal(job.state as JobState))
    throw new ApiError('FAILED_PRECONDITION', `firmware campaign ${id} already ${job.state}; nothing to ${action}`);
  check?.(job);
  return db.transaction(async (tx) => {
    await write(tx);
    await auditAccepted(tx, caller, 202, { action: `firmware.campaign.${action}`, target: `job/${id}`, jobId: id });
    return (await getJob(tx, id))!;
  });
}

/**
 * Sends a signal to the campaign's workflow through an intent the workflow agent delivers. An approval comes from
 * another person than the campaign's creator while the two-person rule campaign.approve is on.
 */
export function signalCampaign(
  db: Db,
  caller: Caller,
  id: string,
  signal: CampaignSignal,
  twoPerson: TwoPersonConfig,
): Promise<Job> {
  return actOnCampaign(
    db,
    caller,
    id,
    signal,
    async (tx) => {
      await insertIntent(tx, id, 'signal', { signal });
      await notifyIntent(tx, id);
    },
    (job) => (signal === 'approve' ? checkCampaignApprover(twoPerson, caller, job) : undefined),
  );
}

/** Cancels the campaign as any job is cancelled: running device updates stop, the rest never start. */
export function cancelCampaign(db: Db, caller: Caller, id: string): Promise<Job> {
  return actOnCampaign(db, caller, id, 'cancel', (tx) => requestJobCancel(tx, id));
}

/**
 * Replaces a site's maintenance windows under If-Match (412 when they changed since the caller read them), with the
 * audit row, in one transaction.
 */
export async function setMaintenanceWindows(
  db: Db,
  caller: Caller,
  input: { siteId: string; windows: MaintenanceWindowSpec[]; ifMatch: string | string[] | undefined },
): Promise<void> {
  if (!(await getSite(db, input.siteId))) throw notFound('site', input.siteId);
  await db.transaction(async (tx) => {
    const replaced = await replaceMaintenanceWindows(tx, input.siteId, input.windows);
    checkIfMatch(input.ifMatch, windowsView(replaced).etag);
    await auditAccepted(tx, caller, 200, {
      action: 'site.maintenance_windows',
      target: `site/${input.siteId}`,
      details: { windows: windowsView(input.windows).view.windows },
    });
  });
}
