import { dirname } from 'node:path';
import type { PlannedJob } from './plan.js';
import { RESULT_MARK } from './result-line.js';

/*
 * The burn-in job scripts, all in this one file. A script runs one test and prints exactly one result line:
 *
 *   FLEET_BURNIN_RESULT {"v":1,"test":"gpu_stress","slurmJobId":"42",
 *                        "results":[{"device":"<tray name>","verdict":"pass"|"fail","failures":["..."]}]}
 *
 * exiting 0 when the test ran (whatever it found) and non-zero when it could not. What the script runs is the site's
 * business: the simulated site asks the BMC simulator's tray health model; a real site runs the vendor tools
 * (docs/burn-in.md lists the commands). Values reach a script through its environment only, never pasted into its
 * text, so no tray name can change what the script does.
 */

/** What is submitted for a planned job. */
export interface RenderedJob {
  script: string;
  environment: Record<string, string>;
}

/** A site's job scripts. */
export interface ScriptSite {
  render(job: PlannedJob): RenderedJob;
}

/**
 * The simulated site's verdict per tray, from the simulator's health reports (GET /bmcs/:id/health, one JSON per
 * line on stdin): the tray's own failures (host off, no AC) plus the faults of the parts the test exercises. Plain
 * CommonJS, written to a file by the script. A report it cannot read is never a pass: JSON.parse throws, the script
 * exits non-zero.
 */
const simulatedJudge = String.raw`
const test = process.env.FLEET_BURNIN_TEST;
const reports = require('fs')
  .readFileSync(0, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l));
const said = (p) => p.id + ': ' + p.health + ' (' + (p.reason || 'no reason given') + ')';
const faulty = (list, what) => (list && list.length ? list.filter((p) => p.health !== 'OK').map(said) : ['no ' + what]);
const parts = {
  gpu_stress: (r) => faulty(r.gpus, 'GPUs reported'),
  memory: (r) => faulty(r.memory, 'memory reported'),
  nvlink_allreduce: (r) => {
    const n = r.nvlink;
    if (!n || !n.ports) return ['no NVLink ports reported'];
    const found = n.faults.map(said);
    const unexplained = n.ports - n.up - n.faults.filter((f) => !f.linkUp).length;
    if (unexplained > 0) found.push(unexplained + ' of ' + n.ports + ' NVLink ports down');
    return found;
  },
};
if (!parts[test]) throw new Error('unknown test ' + test);
const isPart = /^(GPU_|CPU_|ProcessorModule_)/;
const results = reports.map((r) => {
  const failures = [];
  if (r.kind !== 'compute') failures.push(r.device + ' is not a compute tray (' + r.kind + ')');
  failures.push(...(r.failures || []).filter((f) => !isPart.test(f)));
  if (r.powerState !== 'On' && failures.length === 0) failures.push('host power is ' + r.powerState);
  failures.push(...parts[test](r));
  return { device: r.device, verdict: failures.length === 0 ? 'pass' : 'fail', failures };
});
const line = { v: 1, test, slurmJobId: process.env.SLURM_JOB_ID || '', results };
console.log('${RESULT_MARK} ' + JSON.stringify(line));
`;

const simulatedScript = `#!/bin/bash
# Fleet burn-in, simulated site: in place of the vendor tool, ask the BMC simulator for each tray's health
# (GET $FLEET_BURNIN_SIMULATOR/bmcs/<tray>/health) and judge the parts this test exercises.
set -euo pipefail
echo "fleet burn-in: $FLEET_BURNIN_TEST on $FLEET_BURNIN_TRAYS (SLURM job \${SLURM_JOB_ID:-none})"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tray in $FLEET_BURNIN_TRAYS; do
  curl -sS --fail --max-time 20 "$FLEET_BURNIN_SIMULATOR/bmcs/$tray/health" >>"$work/reports"
  echo >>"$work/reports"
done
cat >"$work/judge.js" <<'JUDGE'${simulatedJudge}JUDGE
node "$work/judge.js" <"$work/reports"
`;

/**
 * The simulated site: every test is the same script, told the test and trays by its environment. `node` is the one
 * running this satellite (the simulated site's SLURM node is this machine), put first on the job's PATH.
 */
export function simulatedSite(opts: { simulatorUrl: string; jobPath: string }): ScriptSite {
  const path = `${dirname(process.execPath)}:${opts.jobPath}`;
  return {
    render: (job) => ({
      script: simulatedScript,
      environment: {
        PATH: path,
        FLEET_BURNIN_TEST: job.test,
        FLEET_BURNIN_TRAYS: job.trays.map((t) => t.name).join(' '),
        FLEET_BURNIN_SIMULATOR: opts.simulatorUrl.replace(/\/+$/, ''),
      },
    }),
  };
}
