import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { makespanLowerBound } from '@fleet/domain';
import { manifestFor } from '../test/harness/firmware.js';
import { unwrap } from '@fleet/client';
import { Stack } from '../test/harness/stack.js';
import { benchFirmwareTimings, prepareStackBench } from './lib/environment.js';
import { runTrivialBaseline } from './lib/trivial-workflow-run.js';
import { measureArtifactPath } from './lib/artifact-fetch.js';
import { probeParse, writeBenchPackage } from './lib/fwpkg-parse.js';

type HistoryEvent = Record<string, unknown>;

/**
 * Temporal Actions a history costs, estimated from its events (the billable ones, as Temporal Cloud counts them):
 * a workflow start (WorkflowExecutionStarted, so a child counts in its own history), each activity scheduled,
 * each local activity (its marker), each timer started, each signal received, each memo or search-attribute
 * upsert, each child workflow start initiated (the parent's request, on top of the child's own start), each
 * continue-as-new. Heartbeats, retries and workflow tasks are left out (Cloud bills heartbeats only when they
 * reach the server, which the SDK throttles; retries are not billed).
 */
export function actionsOf(events: HistoryEvent[]): number {
  let n = 0;
  for (const e of events) {
    if (
      e['workflowExecutionStartedEventAttributes'] ||
      e['activityTaskScheduledEventAttributes'] ||
      e['timerStartedEventAttributes'] ||
      e['workflowExecutionSignaledEventAttributes'] ||
      e['workflowPropertiesModifiedEventAttributes'] ||
      e['upsertWorkflowSearchAttributesEventAttributes'] ||
      e['startChildWorkflowExecutionInitiatedEventAttributes'] ||
      e['workflowExecutionContinuedAsNewEventAttributes']
    )
      n++;
    const marker = e['markerRecordedEventAttributes'] as { markerName?: string } | undefined;
    if (marker?.markerName === 'core_local_activity') n++;
  }
  return n;
}

/**
 * Firmware at fleet scale through the whole stack: a campaign over N simulated compute trays
 * (two packages each, activation, verification) under a site cap, against the floor the caps
 * and the simulated per-device time allow; Temporal history events and estimated Actions per device (child and
 * campaign together); a trivial-workflow baseline on the same dev server (baseline_makespan_s); then the package
 * parser and the hub → satellite artifact path on a 1 GiB package.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  // `pnpm bench firmware [devices] [cap] [--campaign-only]`: --campaign-only skips the 1 GiB package figures.
  const devices = Number(args[0] ?? 1000);
  const cap = Number(args[1] ?? 100);
  const campaignOnly = args.includes('--campaign-only');
  const cleanup = await prepareStackBench('firmware');
  // 600 s flash → 6 s, 120 s BMC boot → 1.2 s.
  const timeScale = 0.01;
  const firmware = benchFirmwareTimings;
  const stack = new Stack({
    // Measured as the trivial-workflow baseline runs: no codec; no leak scan of thousands of histories at the end.
    payloadEncryption: false,
    leakScan: false,
    // Many concurrent pollers share one token: the bench measures the stack, not the rate limit.
    rateLimit: { enabled: false },
    bmcs: devices,
    timeScale,
    projectionIntervalMs: 1000,
    pollIntervalMs: 200,
    power: { heartbeatTimeoutS: 30, settleTimeoutS: 300 },
    firmware,
  });
  await stack.start();
  const connection = await Connection.connect({ address: stack.temporal.address });
  const temporal = new Client({ connection });
  const pkg = join(tmpdir(), `fleet-bench-${process.pid}.fwpkg`);
  try {
    await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.11.0', { isDefault: true });
    const policy = {
      canarySize: 0,
      autoApprove: true,
      waveSize: devices,
      maxConcurrentPerSite: cap,
      maxConcurrentPerRack: 18,
      maxConcurrentPerPowerDomain: 36,
      failureBudget: 10,
    };
    const started = Date.now();
    const created = await unwrap(
      stack
        .client('operator')
        .POST('/v1/firmware-campaigns', { body: { name: 'bench', site_id: stack.siteId, policy } }),
    );
    // Without dry_run the hub answers with the campaign's job (a dry run answers with the plan alone).
    if (!('id' in created)) throw new Error('the campaign was planned, not started');
    // Read every 2 s, not the harness's 100 ms: the makespan comes from finished_at, and each read of a campaign
    // counts its devices in Postgres on the two cores the campaign runs on (docs/scale.md).
    const done = (await stack.waitForJob(created.id, 3_600_000, 2000)) as {
      state: string;
      finished_at: string;
      error?: unknown;
      result?: Record<string, number>;
    };
    if (done.state !== 'succeeded') throw new Error(`campaign ${done.state}: ${JSON.stringify(done.error)}`);
    const makespan = (Date.parse(done.finished_at) - started) / 1000;

    // Per device: two 600 s flashes, UPDATE_DELAY between them, a BMC reboot (activation), stabilisation.
    const perDeviceS = 2 * 600 * timeScale + firmware.pushDelayS + 120 * timeScale + firmware.acStabilizeS;
    const planned = [...stack.deviceIds.values()].map((id) => ({
      deviceId: id,
      rackId: null,
      powerDomain: `device:${id}`,
      nodeType: 'compute_gb200_nvidia',
    }));
    const lowerBound = makespanLowerBound(planned, policy, () => perDeviceS);

    let childEvents = 0;
    let actions = 0;
    const events = async (workflowId: string, runId: string) =>
      ((await temporal.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? []) as HistoryEvent[];
    // Small pages: each listing carries the workflow's memo (timeline and per-component results).
    for await (const wf of temporal.workflow.list({
      query: `FleetJobKind = 'device.firmware_update'`,
      pageSize: 100,
    })) {
      childEvents += wf.historyLength ?? 0;
      actions += actionsOf(await events(wf.workflowId, wf.runId));
    }
    let parentEvents = 0;
    // Every run of the campaign (it may have continued as new).
    for await (const wf of temporal.workflow.list({ query: `WorkflowId = '${created.id}'` })) {
      parentEvents += wf.historyLength ?? 0;
      actions += actionsOf(await events(wf.workflowId, wf.runId));
    }

    // The trivial-workflow baseline on the same dev server, after the campaign: as many workflows, the same
    // concurrency, the device workflow's activity count (applyFirmware and two inventory reads) of no-op
    // activities that together wait the simulated device time. Its makespan is what the server alone costs.
    const baselineActivities = 3;
    const baseline = await runTrivialBaseline({
      address: stack.temporal.address,
      devices,
      concurrency: cap,
      activities: baselineActivities,
      holdMs: (perDeviceS * 1000) / baselineActivities,
    });

    const campaignFigures: Record<string, unknown> = {
      devices,
      max_concurrent_per_site: cap,
      campaign_makespan_s: Number(makespan.toFixed(1)),
      lower_bound_s: Number(lowerBound.toFixed(1)),
      makespan_over_lower_bound: Number((makespan / lowerBound).toFixed(2)),
      campaign_makespan_s_over_lower_bound_s_ratio: Number((makespan / lowerBound).toFixed(2)),
      baseline_makespan_s: Number(baseline.makespanS.toFixed(1)),
      baseline_over_lower_bound_ratio: Number((baseline.makespanS / lowerBound).toFixed(2)),
      campaign_over_baseline_ratio: Number((makespan / baseline.makespanS).toFixed(2)),
      baseline_history_events_per_device: Number(baseline.eventsPerDevice.toFixed(1)),
      simulated_device_s: perDeviceS,
      history_events_per_device: Number(((childEvents + parentEvents) / devices).toFixed(1)),
      campaign_history_events: parentEvents,
      temporal_actions_per_device: Number((actions / devices).toFixed(1)),
    };

    if (campaignOnly) return campaignFigures;
    // The parser on a 1 GiB package, in a fresh process so its peak RSS is its own; then the
    // same bytes through the hub's upload and a satellite cache's fetch.
    try {
      await writeBenchPackage(pkg);
      const parse = probeParse(pkg);
      const path = await measureArtifactPath(stack, pkg, join(stack.dir, 'bench-cache'));
      Object.assign(campaignFigures, {
        fwpkg_parse_mib_per_s: parse.mibPerS,
        fwpkg_parse_peak_rss_mib: parse.peakRssMib,
        fwpkg_parse_baseline_rss_mib: parse.baselineRssMib,
        artifact_upload_mib_per_s: path.uploadMibPerS,
        artifact_fetch_mib_per_s: path.fetchMibPerS,
      });
    } finally {
      rmSync(pkg, { force: true });
    }
    return campaignFigures;
  } finally {
    await connection.close();
    await stack.stop();
    await cleanup();
  }
}
