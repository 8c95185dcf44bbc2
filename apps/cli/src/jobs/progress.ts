import type { Job } from '@fleet/client';
import { decisionLines, pendingDecision } from './decision.js';
import { awaitsApproval } from './follow.js';

type Stage = NonNullable<Job['timeline']>['stages'][number];

/**
 * What changed between two versions of a job, as lines a person follows in a terminal or a log: the state, each
 * stage that started or ended, the progress message, the children (devices) by state, and a decision it waits for.
 */
export function progressLines(previous: Job | undefined, job: Job): string[] {
  const lines: string[] = [];
  if (previous?.state !== job.state) lines.push(`job ${job.id} (${job.kind}) ${job.state}`);
  lines.push(...stageLines(previous?.timeline?.stages ?? [], job.timeline?.stages ?? []));
  const progress = progressText(job);
  if (progress && progress !== (previous ? progressText(previous) : undefined)) lines.push(`  ${progress}`);
  const children = childrenText(job);
  if (children && children !== (previous ? childrenText(previous) : undefined)) lines.push(`  devices: ${children}`);
  const decision = pendingDecision(job);
  // Again whenever it changes: a decision for some devices leaves the others waiting, a retry may fail again.
  if (decision && JSON.stringify(decision) !== JSON.stringify(previous && pendingDecision(previous)))
    lines.push(...decisionLines(job, decision).map((l) => `  ${l}`));
  if (awaitsApproval(job) && (!previous || !awaitsApproval(previous)))
    lines.push(`  the canary is done: check it, then \`fleetctl campaign approve ${job.id}\``);
  if (job.error && (previous?.error?.message !== job.error.message || previous.state !== job.state))
    lines.push(`  error ${job.error.code}: ${job.error.message}`);
  return lines;
}

function stageLines(before: Stage[], after: Stage[]): string[] {
  const was = new Map(before.map((s) => [s.name, s.status]));
  const lines: string[] = [];
  for (const [i, s] of after.entries()) {
    if (s.status === 'queued' || was.get(s.name) === s.status) continue;
    const took = s.durationS !== undefined && s.status !== 'running' ? ` in ${s.durationS.toFixed(1)} s` : '';
    lines.push(`  stage ${i + 1}/${after.length} ${s.name}: ${s.status}${took}${s.message ? ` (${s.message})` : ''}`);
  }
  return lines;
}

/** The job's own progress (stage, percent, message) when it has no stage timeline to say it. */
function progressText(job: Job): string | undefined {
  const p = job.progress;
  if (!p || job.timeline?.stages.length) return undefined;
  const percent = typeof p.percent === 'number' ? ` ${Math.round(p.percent)}%` : '';
  return `${p.stage}${percent}${p.message ? `: ${p.message}` : ''}`;
}

/** `12/35 succeeded, 1 failed, 22 running` for a job with children. */
export function childrenText(job: Job): string | undefined {
  const c = job.children;
  if (!c || c.total === 0) return undefined;
  const order = ['succeeded', 'failed', 'cancelled', 'cancelling', 'running', 'queued'];
  const parts = order.filter((s) => (c.by_state[s] ?? 0) > 0).map((s) => `${c.by_state[s]} ${s}`);
  const done = c.by_state['succeeded'] ?? 0;
  return `${done}/${c.total} succeeded${parts
    .filter((p) => !p.endsWith(' succeeded'))
    .map((p) => `, ${p}`)
    .join('')}`;
}
