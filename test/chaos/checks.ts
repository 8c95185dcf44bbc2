import type { DeviceFirmwareResult } from '@fleet/domain';
import type { Flash } from '../harness/firmware.js';

// The chaos suite's end-state checks as pure functions of the evidence (docs/chaos.md): the runner gathers it from
// the simulators' logs, Postgres and Temporal, and each check names every offender it finds.

export type Offend = (check: string, id: string) => void;

export const terminalStates: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

/** Every intent reached a terminal job. */
export function checkIntents(intents: { job_id: string; state: string | null }[], offend: Offend): void {
  for (const i of intents)
    if (!i.state || !terminalStates.has(i.state)) offend('lost_intents', `${i.job_id} (${i.state})`);
}

export interface FirmwareJob {
  id: string;
  state: string;
  result: DeviceFirmwareResult | null;
  created_at: Date;
  finished_at: Date | null;
}

/**
 * One device's flashes against its firmware jobs: no version flashed twice (each job asks for a version no other job
 * asks for), and no component reported updated (or already there) unless the BMC flashed that version in time.
 */
export function checkFlashes(
  device: string,
  flashes: readonly (Flash & { at: string })[],
  jobs: readonly FirmwareJob[],
  offend: Offend,
): void {
  const seen = new Map<string, number>();
  for (const f of flashes) seen.set(`${f.id}@${f.version}`, (seen.get(`${f.id}@${f.version}`) ?? 0) + 1);
  for (const [k, n] of seen) if (n > 1) offend('double_flashes', `${device} ${k} x${n}`);
  for (const j of jobs) {
    const end = j.finished_at?.getTime() ?? Infinity;
    for (const c of j.result?.components ?? []) {
      if (j.state === 'succeeded' && c.status !== 'updated' && c.status !== 'skipped')
        offend('false_successes', `${device} job ${j.id} succeeded with ${c.id} ${c.status}`);
      if (c.status !== 'updated' && c.status !== 'skipped') continue;
      // Updated: flashed during the job. Skipped (already there): flashed before its end, every version being new.
      const from = c.status === 'updated' ? j.created_at.getTime() : 0;
      const flashed = flashes.some(
        (f) => f.id === c.id && f.version === c.to && Date.parse(f.at) >= from && Date.parse(f.at) <= end,
      );
      if (!flashed) offend('false_successes', `${device} job ${j.id} ${c.id} -> ${c.to} (${c.status})`);
    }
    if (j.state === 'succeeded' && !(j.result?.components ?? []).length)
      offend('false_successes', `${device} job ${j.id} succeeded with no component result`);
  }
}

/** A device's last succeeded firmware job against what the BMC has installed now. */
export function checkInstalled(
  device: string,
  job: FirmwareJob,
  installed: readonly { id: string; version: string }[],
  offend: Offend,
): void {
  if (job.state !== 'succeeded') return;
  for (const c of job.result?.components ?? [])
    if (installed.find((i) => i.id === c.id)?.version !== c.to)
      offend('false_successes', `${device} job ${job.id} ${c.id}: installed is not ${c.to}`);
}

/** At most one accepted host reset per device per rack sequence, and none outside a sequence. */
export function checkResets(
  bmc: string,
  actions: readonly { at: string; path: string; status: number }[],
  windows: readonly { id: string; from: number; to: number }[],
  offend: Offend,
): number {
  const resets = actions.filter(
    (r) => r.path.endsWith('.Reset') && !r.path.includes('Manager') && r.status > 0 && r.status < 300,
  );
  const perJob = new Map<string, number>();
  for (const r of resets) {
    const at = Date.parse(r.at);
    const w = windows.find((x) => at >= x.from && at <= x.to);
    if (!w) offend('duplicate_power_actions', `${bmc} ${r.path} at ${r.at} outside every rack job`);
    else perJob.set(w.id, (perJob.get(w.id) ?? 0) + 1);
  }
  for (const [job, n] of perJob) if (n > 1) offend('duplicate_power_actions', `${bmc} job ${job}: ${n} resets`);
  return resets.length;
}

/**
 * A job's projected state against its workflow's final state as the projector reads it (`undefined`: Temporal has
 * no such workflow, which is right only for a job that never had a run projected).
 */
export function checkProjection(
  job: { id: string; kind: string; state: string; run_id: string | null },
  workflowState: string | undefined | 'no-workflow',
  offend: Offend,
): void {
  if (workflowState === 'no-workflow') {
    if (job.run_id) offend('projection_mismatches', `${job.id} ${job.kind}: run ${job.run_id} projected, no workflow`);
    return;
  }
  if (workflowState !== job.state)
    offend('projection_mismatches', `${job.id} ${job.kind}: job ${job.state}, workflow ${workflowState}`);
}
