import type { DeviceStatus, DeviceTransitionRow, RackDeviceSummary } from '@fleet/db';
import { z } from 'zod';
import {
  axisWriters,
  conditionStatuses,
  conditionTypes,
  deviceAxes,
  fleetLifecycleStates,
  type DeviceCondition,
} from '@fleet/domain';

// A device's status beyond its inventory record (docs/lifecycle.md): Fleet's own lifecycle, its conditions, the
// history of both, and a rack's summary of them. Shared by views.ts (devices, racks) and the history route.

const timestamp = z.iso.datetime();

export const FleetLifecycleState = z.enum(fleetLifecycleStates).meta({ id: 'FleetLifecycleState' });
export const ConditionType = z.enum(conditionTypes).meta({ id: 'ConditionType' });
const ConditionStatus = z.enum(conditionStatuses);

export const LifecycleView = z
  .object({
    state: FleetLifecycleState,
    since: timestamp.describe('When the device entered the state: its last lifecycle move, or its creation if none'),
  })
  .describe("Fleet's own lifecycle (not NetBox's status, which is lifecycle_state)")
  .meta({ id: 'FleetLifecycle' });

/** Kubernetes' metav1.Condition, in the API's snake case. */
export const ConditionView = z
  .object({
    type: ConditionType,
    status: ConditionStatus,
    reason: z.string().describe('CamelCase, machine-readable: why the status is what it is'),
    message: z.string(),
    last_transition_time: timestamp.describe(
      'When status last changed; a new reason or message alone does not move it',
    ),
    observed_generation: z.number().int(),
  })
  .meta({ id: 'Condition' });

export const TransitionView = z
  .object({
    id: z.number().int(),
    axis: z.enum(deviceAxes),
    /** Set for a condition's status change; null for a move of the axis itself (the lifecycle's). */
    condition_type: ConditionType.nullable(),
    /** Null when the value first appeared (a new condition). */
    from: z.string().nullable(),
    to: z.string(),
    writer: z.enum(axisWriters),
    job_id: z.uuid().nullable(),
    reason: z.string(),
    message: z.string().nullable(),
    at: timestamp,
  })
  .meta({ id: 'DeviceTransition' });
export const TransitionPage = z
  .object({ items: z.array(TransitionView), next_cursor: z.string().nullable() })
  .meta({ id: 'DeviceTransitionPage' });

const notTrue = z.enum(conditionStatuses.filter((s) => s !== 'True') as ['False', 'Unknown']);
export const RackDeviceSummaryView = z
  .object({
    by_lifecycle: z
      .partialRecord(FleetLifecycleState, z.number().int())
      .describe('Live devices by Fleet lifecycle state; states no device is in are left out'),
    conditions_not_true: z
      .partialRecord(ConditionType, z.partialRecord(notTrue, z.number().int()))
      .describe('Live devices whose condition is False or Unknown, by condition type and status'),
  })
  .meta({ id: 'RackDeviceSummary' });

export function lifecycleView(
  d: { fleetLifecycle: z.infer<typeof FleetLifecycleState> },
  status: DeviceStatus,
): z.infer<typeof LifecycleView> {
  return { state: d.fleetLifecycle, since: status.lifecycleSince.toISOString() };
}

export function conditionView(c: DeviceCondition): z.infer<typeof ConditionView> {
  return {
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message,
    last_transition_time: c.lastTransitionTime.toISOString(),
    observed_generation: c.observedGeneration,
  };
}

export function transitionView(t: DeviceTransitionRow): z.infer<typeof TransitionView> {
  return {
    id: t.id,
    axis: t.axis,
    condition_type: t.conditionType,
    from: t.fromState,
    to: t.toState,
    writer: t.writer,
    job_id: t.jobId,
    reason: t.reason,
    message: t.message,
    at: t.at.toISOString(),
  };
}

export function rackDeviceSummaryView(s: RackDeviceSummary): z.infer<typeof RackDeviceSummaryView> {
  return { by_lifecycle: s.byLifecycle, conditions_not_true: s.conditionsNotTrue };
}
