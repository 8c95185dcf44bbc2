/**
 * Held devices (docs/day2.md, "Held devices"): a device quarantined, under remediation or at the vendor is left out
 * of campaigns and power batches and refuses rack sequences, enrolment and device jobs unless an operator overrides the
 * hold with a reason; only remediation acts on it. Dependency-free so workflow code may use it.
 */
import type { FleetLifecycleState } from './lifecycle.js';

/** The lifecycle states that hold a device. */
export const heldLifecycleStates = [
  'quarantined',
  'remediating',
  'rma',
] as const satisfies readonly FleetLifecycleState[];
export type HeldLifecycleState = (typeof heldLifecycleStates)[number];

export function isHeld(state: string): state is HeldLifecycleState {
  return (heldLifecycleStates as readonly string[]).includes(state);
}

/** The remediation workflow's kinds (an RMA's shipping and return included): they exist to act on held devices. */
export const remediationJobKinds = [
  'device.quarantine',
  'device.release',
  'device.remediate',
  'device.rma_ship',
  'device.rma_return',
] as const;

/** Kinds that only read the device into the projection: a held device's readings are what remediation looks at. */
export const observationJobKinds = ['device.power_refresh', 'device.firmware_refresh'] as const;

/** Whether a job of `kind` may run on a held device without an operator's override. */
export function actsOnHeldDevices(kind: string): boolean {
  return (
    (remediationJobKinds as readonly string[]).includes(kind) ||
    (observationJobKinds as readonly string[]).includes(kind)
  );
}

/** A held device and why: its state and the lifecycle move that put it there. */
export interface DeviceHold {
  deviceId: string;
  name: string;
  state: HeldLifecycleState;
  /** When it entered the state: its last lifecycle move, or its creation when it never moved. */
  since: Date;
  /** The move's CamelCase reason; null when no recorded move put the device in its state. */
  reason: string | null;
  /** The move's message, for people. */
  message: string | null;
  /** The job that made the move. */
  jobId: string | null;
}

/** Why the device is held, for people: its message and reason, whichever it has. */
export function holdReason(h: Pick<DeviceHold, 'reason' | 'message'>): string {
  if (h.message && h.reason) return `${h.message} (${h.reason})`;
  return h.message ?? h.reason ?? 'no recorded reason';
}

/** `quarantined since 2025-01-02T03:04:05.000Z: leak on LeakDetector_1 (LeakDetected)`. */
export function holdText(h: DeviceHold): string {
  return `${h.state} since ${h.since.toISOString()}: ${holdReason(h)}`;
}
