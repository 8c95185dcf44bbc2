// The root package (bench) does not depend on @temporalio/workflow; the workflows package does, at the version the
// worker bundles, so this resolves to the same module for tsc and for the worker's bundler.
import { proxyActivities } from '../../workflows/node_modules/@temporalio/workflow/lib/index.js';

/** The baseline's activities: nothing but a wait standing in for the device's time. */
export interface TrivialActivities {
  noop(holdMs: number): Promise<void>;
}

const { noop } = proxyActivities<TrivialActivities>({ startToCloseTimeout: '10m' });

/** A loop of no-op activities: the least history a workflow with that many activities can have. */
export async function trivialDeviceWorkflow(activities: number, holdMs: number): Promise<void> {
  for (let i = 0; i < activities; i++) await noop(holdMs);
}
