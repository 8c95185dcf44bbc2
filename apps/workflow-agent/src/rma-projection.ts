import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { Logger } from 'pino';
import {
  applyRmaRevalidation,
  openRmaDraft,
  type DbOrTx,
  type Job,
  type JobProjection,
  type RmaOpening,
  type RmaRevalidationReport,
} from '@fleet/db';
import { lifecycleMemoKey, type LifecycleMemo, type RemediationResult } from '@fleet/domain';

/** The kinds whose runs revalidate a device back from the vendor (docs/day2.md, "RMA"). */
const enrolmentKinds = new Set(['rack.enrol', 'device.enrol', 'device.burn_in']);

/** What a page of projected jobs tells RMA cases, applied in the page's transaction. */
export interface RmaReports {
  drafts: (RmaOpening & { jobId: string })[];
  revalidations: RmaRevalidationReport[];
}

export const noRmaReports = (): RmaReports => ({ drafts: [], revalidations: [] });

/**
 * Adds what one projected job tells RMA cases: a remediation that ran out of steps (its result `escalated`) drafts a
 * case; an enrolment or burn-in whose lifecycle report changed, or that ended, reports its devices for revalidation.
 */
export function collectRma(
  out: RmaReports,
  job: Job,
  wf: WorkflowExecutionInfo,
  p: JobProjection,
  lifecycleChanged: boolean,
): void {
  if (job.kind === 'device.remediate' && job.deviceId && p.state !== 'running') {
    const escalated = (p.result as Partial<RemediationResult> | undefined)?.escalated;
    if (escalated) {
      const why = p.error?.message ?? `the playbook did not clear ${escalated.faultClass} on ${escalated.part}`;
      out.drafts.push({
        deviceId: job.deviceId,
        failedPart: escalated.part,
        faultClass: escalated.faultClass,
        reason: escalated.message ? `${why} (${escalated.message})` : why,
        jobId: job.id,
        openedBy: 'remediation',
      });
    }
  }
  if (enrolmentKinds.has(job.kind) && (lifecycleChanged || p.state !== 'running')) {
    const memo = wf.memo?.[lifecycleMemoKey] as LifecycleMemo | undefined;
    const deviceIds = memo ? Object.keys(memo.devices) : job.deviceId ? [job.deviceId] : [];
    for (const deviceId of deviceIds)
      out.revalidations.push({ deviceId, jobId: job.id, succeeded: p.state === 'succeeded' });
  }
}

/** Opens the drafts and moves the cases; after the lifecycle reports, so it sees the devices' new states and reads. */
export async function applyRma(tx: DbOrTx, r: RmaReports, log: Logger): Promise<void> {
  for (const d of r.drafts) {
    const opened = await openRmaDraft(tx, d);
    if (!opened || opened.rmaCase.jobId === d.jobId) {
      if (opened?.opened)
        log.info({ jobId: d.jobId, deviceId: d.deviceId, rmaCaseId: opened.rmaCase.id }, 'RMA case opened');
      continue;
    }
    log.info(
      { jobId: d.jobId, deviceId: d.deviceId, rmaCaseId: opened.rmaCase.id },
      'remediation exhausted; the device has an RMA case open already',
    );
  }
  for (const c of await applyRmaRevalidation(tx, r.revalidations))
    log.info({ rmaCaseId: c.id, deviceId: c.deviceId, swap: c.swap ?? undefined }, `RMA case ${c.state}`);
}
