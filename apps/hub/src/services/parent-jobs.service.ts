import {
  findActiveJobForDevice,
  insertParentWithChildren,
  isUniqueViolation,
  notifyIntent,
  setJobResult,
  type ChildSpec,
  type Db,
  type Device,
  type Job,
  type NewJob,
  type Tx,
  uniqueIndexes,
} from '@fleet/db';
import { missingForOperation } from '@fleet/domain';
import { ApiError } from '../errors.js';
import { heldDeviceView, type OverrideQuarantine } from '../hold-override.js';
import { auditAccepted, type Caller } from './caller.js';
import { checkSites } from './site-scope.js';
import { refuseClosedSites } from './sites.service.js';
import { heldConflict, holdsFor, overrideAudit } from './holds.service.js';

/**
 * How a parent's children run. A rack sequence's one workflow operates every device itself: its
 * children are rows of per-device outcomes, not workflows. A batch has no workflow: each child is
 * one of its own, and the parent only aggregates them. A campaign starts each child's workflow
 * (workflow ID = child job ID) and waits for it.
 */
const RUN_IN_PARENT_WORKFLOW = new Set(['rack.power', 'rack.cold_reboot', 'rack.enrol', 'rack.bmc_password_rotation']);
const NO_WORKFLOW = new Set(['batch.power']);
/** Parents whose children can be cancelled one by one: nothing else waits on a batch child's workflow. */
const CHILDREN_CANCELLABLE_ALONE = new Set(['batch.power']);

type JobKey = Pick<Job, 'id' | 'kind' | 'parentId'>;

/** The Temporal workflow that runs a job (workflow ID = job ID), or null when none does (a batch). */
export function workflowIdOf(job: JobKey, parentKind: string | undefined): string | null {
  if (NO_WORKFLOW.has(job.kind)) return null;
  if (job.parentId && parentKind && RUN_IN_PARENT_WORKFLOW.has(parentKind)) return job.parentId;
  return job.id;
}

/**
 * The 409 for cancelling a child whose parent's workflow drives it, or undefined when it may be
 * cancelled alone. Cancelling such a child's own workflow would not stop its device (a rack
 * sequence's child has none) or would leave its campaign waiting for a device that never ends.
 */
export function childCancelRefusal(job: JobKey, parentKind: string | undefined): ApiError | undefined {
  if (!job.parentId || (parentKind && CHILDREN_CANCELLABLE_ALONE.has(parentKind))) return undefined;
  return new ApiError(
    'FAILED_PRECONDITION',
    `job ${job.id} is one device's part of ${parentKind ?? 'parent'} job ${job.parentId}, whose workflow ` +
      `operates the device; it cannot be cancelled alone: cancel the parent (POST ` +
      `/v1/jobs/${job.parentId}/cancel)`,
    [{ field: 'path.id', issue: `child of job ${job.parentId}; cancel the parent` }],
  );
}

export interface ParentRequest {
  parent: Omit<NewJob, 'createdBy'>;
  devices: Device[];
  childParams: (d: Device) => Record<string, unknown>;
  /** Rack sequences take every device or none; batches take what they can and list the rest. */
  allOrNothing: boolean;
  /** Batches run one workflow per child; rack sequences one workflow for the parent. */
  childWorkflows: boolean;
  action: string;
  target: string;
  /** The children's job kind (default device.power). */
  childKind?: string;
  /** An operator's override of the holds (quarantined, remediating, rma) on the devices. */
  overrideQuarantine?: OverrideQuarantine | undefined;
  /** What else the request writes in the jobs' transaction (an approval's decision). */
  alsoInTransaction?: ((tx: Tx, job: Job) => Promise<void>) | undefined;
  /** Who the parent is by when not the caller: the requester of an approved two-person request. */
  createdBy?: string | undefined;
  /** More for the audit row's details (the approval the jobs were made under). */
  auditDetails?: Record<string, unknown> | undefined;
}

export interface Refusal {
  device_id: string;
  name: string;
  reason: string;
}

/**
 * Creates a parent job and a child per admitted device, the intents and the audit row
 * in one transaction. Devices the inventory cannot operate, or that are busy with
 * another job, are refused with their reason. Held devices (quarantined, remediating,
 * rma) are skipped by a batch (listed in its result) and refuse a rack sequence (409),
 * unless the caller overrides the holds; the audit row records the override.
 */
export async function createParentJob(
  db: Db,
  caller: Caller,
  req: ParentRequest,
): Promise<{ job: Job; admitted: number; refused: Refusal[] }> {
  // A selection over several sites needs every one of them.
  const siteIds = req.devices.map((d) => d.siteId);
  checkSites(caller.actor, req.parent.siteId ? [req.parent.siteId, ...siteIds] : siteIds, req.target);
  const refused: Refusal[] = [];
  const operable: Device[] = [];
  for (const d of req.devices) {
    const missing = missingForOperation(d);
    if (d.deletedAt) refused.push({ device_id: d.id, name: d.name, reason: 'deleted from the inventory' });
    else if (missing.length)
      refused.push({ device_id: d.id, name: d.name, reason: `the inventory gives no ${missing.join(', ')}` });
    else operable.push(d);
  }
  if (req.allOrNothing && refused.length) {
    throw new ApiError(
      'FAILED_PRECONDITION',
      `${refused.length} devices of ${req.target} cannot be operated: ` +
        `${refused.map((r) => `${r.name} (${r.reason})`).join('; ')}`,
    );
  }
  const childKind = req.childKind ?? 'device.power';
  const holds = await holdsFor(
    db,
    childKind,
    operable.map((d) => d.id),
  );
  if (holds.length && !req.overrideQuarantine && req.allOrNothing) throw heldConflict(holds, req.target);
  const skipped = req.overrideQuarantine ? [] : holds.map(heldDeviceView);
  const held = new Set(skipped.map((s) => s.device_id));
  const admissible = operable.filter((d) => !held.has(d.id));
  const nameOf = new Map(admissible.map((d) => [d.id, d.name]));
  const children: ChildSpec[] = admissible.map((d) => ({
    deviceId: d.id,
    siteId: d.siteId,
    params: req.childParams(d),
  }));
  try {
    const out = await db.transaction(async (tx) => {
      await refuseClosedSites(tx, [req.parent.siteId, ...children.map((c) => c.siteId)]);
      const res = await insertParentWithChildren(
        tx,
        { ...req.parent, createdBy: req.createdBy ?? caller.actor.name },
        children,
        {
          childKind,
          childIntents: req.childWorkflows,
          parentIntent: !req.childWorkflows,
        },
      );
      const busy: Refusal[] = [];
      for (const id of res.refused) {
        const active = await findActiveJobForDevice(tx, id);
        busy.push({ device_id: id, name: nameOf.get(id)!, reason: `busy with job ${active?.id ?? '(just started)'}` });
      }
      if (req.allOrNothing && busy.length) {
        throw new ApiError(
          'CONFLICT',
          `${busy.length} devices of ${req.target} are busy: ${busy.map((b) => `${b.name} (${b.reason})`).join('; ')}`,
          [{ field: 'target', issue: 'devices busy' }],
        );
      }
      const allRefused = [...refused, ...busy];
      // `skipped`: the held devices a batch left out, each with why it is held.
      const result = { admitted: res.admitted.length, refused: allRefused, skipped };
      if (!req.allOrNothing) await setJobResult(tx, res.parent.id, result);
      await auditAccepted(tx, caller, 202, {
        action: req.action,
        target: req.target,
        jobId: res.parent.id,
        details: {
          params: req.parent.params,
          admitted: res.admitted.length,
          refused: allRefused.length,
          skipped: skipped.length,
          ...overrideAudit(req.overrideQuarantine, holds),
          ...req.auditDetails,
        },
      });
      await req.alsoInTransaction?.(tx, res.parent);
      await notifyIntent(tx, res.parent.id);
      return {
        job: req.allOrNothing ? res.parent : { ...res.parent, result },
        admitted: res.admitted.length,
        refused: allRefused,
      };
    });
    return out;
  } catch (err) {
    if (isUniqueViolation(err, uniqueIndexes.activeRackSequence)) {
      throw new ApiError(
        'CONFLICT',
        `${req.target} already has a power sequence running; wait for it or cancel it (rack guard)`,
        [{ field: 'target', issue: 'rack power operation in progress' }],
      );
    }
    throw err;
  }
}
