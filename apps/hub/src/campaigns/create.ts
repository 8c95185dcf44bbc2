import {
  activeJobsOfDevices,
  heldDevices,
  insertCampaign,
  insertParentWithChildren,
  isUniqueViolation,
  notifyIntent,
  type Db,
  type Job,
} from '@fleet/db';
import type { CampaignPolicy } from '@fleet/domain';
import { ApiError } from '../errors.js';
import type { OverrideQuarantine } from '../hold-override.js';
import { auditAccepted, idempotencyKeyOf, type Caller } from '../services/caller.js';
import { overrideAudit } from '../services/holds.service.js';
import { earlierJob } from '../services/jobs.service.js';
import type { DraftPlan } from './planner.js';
import { checkSites } from '../services/site-scope.js';

export interface CampaignRequest {
  name: string;
  siteId: string;
  policy: CampaignPolicy;
  /** The request as the campaign job records it. */
  params: Record<string, unknown>;
  plan: DraftPlan;
  /** The operator's override that planned held devices; the audit row records it with the held devices planned. */
  overrideQuarantine?: OverrideQuarantine | undefined;
}

const BUSY_NAMED = 20;

function busyConflict(busy: { name: string; jobId: string; kind: string }[], refused: number): ApiError {
  const named = busy.slice(0, BUSY_NAMED).map((b) => `${b.name} (job ${b.jobId}, ${b.kind})`);
  const more = refused > named.length ? `, and ${refused - named.length} more` : '';
  return new ApiError(
    'CONFLICT',
    `${refused} devices already have an active job: ${named.join('; ')}${more}. Wait for those jobs, ` +
      `cancel them, or leave the devices out`,
    busy.map((b) => ({ field: 'devices', issue: `${b.name} is busy with job ${b.jobId} (${b.kind})` })),
  );
}

/**
 * Records a campaign in one transaction: its job with the start intent, a job per planned
 * device (no intents: the campaign workflow starts each device workflow itself, with the
 * child job id as workflow id), the campaign row whose plan names those jobs, and the audit
 * row. Any busy device refuses the whole campaign. `plan` runs only when the request is not
 * a replay of an earlier one with the same Idempotency-Key.
 */
export async function createCampaign(db: Db, caller: Caller, plan: () => Promise<CampaignRequest>): Promise<Job> {
  const actor = caller.actor.name;
  const key = idempotencyKeyOf(caller);
  const print = caller.fingerprint;
  const earlier = await earlierJob(db, actor, key, print);
  if (earlier) return earlier;
  const req = await plan();
  checkSites(caller.actor, [req.siteId], `site/${req.siteId}`, 'body.site_id');
  try {
    return await db.transaction(async (tx) => {
      const { parent, admitted, refused } = await insertParentWithChildren(
        tx,
        {
          kind: 'firmware.campaign',
          siteId: req.siteId,
          params: req.params,
          createdBy: actor,
          idempotencyKey: key ?? null,
          requestFingerprint: print,
        },
        req.plan.devices.map((d) => ({
          deviceId: d.deviceId,
          siteId: req.siteId,
          params: { manifest_id: d.manifestId, components: d.components, force: req.policy.force },
        })),
        { childKind: 'device.firmware_update', childIntents: false, parentIntent: true },
      );
      if (refused.length) throw busyConflict(await activeJobsOfDevices(tx, refused), refused.length);
      const jobOf = new Map(admitted.map((j) => [j.deviceId!, j.id]));
      const overridden = req.overrideQuarantine
        ? await heldDevices(
            tx,
            req.plan.devices.map((d) => d.deviceId),
          )
        : [];
      const devices = req.plan.devices.map((d) => ({ ...d, jobId: jobOf.get(d.deviceId)! }));
      await insertCampaign(tx, {
        id: parent.id,
        name: req.name,
        siteId: req.siteId,
        policy: req.policy,
        plan: { ...req.plan, devices },
        createdBy: actor,
      });
      await auditAccepted(tx, caller, 202, {
        action: 'firmware.campaign',
        target: `site/${req.siteId}`,
        jobId: parent.id,
        details: {
          name: req.name,
          devices: devices.length,
          excluded: req.plan.excluded.length,
          ...overrideAudit(req.overrideQuarantine, overridden),
        },
      });
      await notifyIntent(tx, parent.id);
      return parent;
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // Two requests with the same key raced; the other one won.
    const winner = await earlierJob(db, actor, key, print);
    if (winner) return winner;
    throw err;
  }
}
