import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildWorkflowBundle } from '@fleet/satellite';
import { repoRoot } from '../../tools/lib/processes.js';
import { defaultChaosOptions, runChaos, type ChaosReport } from './chaos.js';

// pnpm chaos [--kills 100] [--seed 1] [--racks 28] [--no-netbox] [--concurrency 50] [--fault-share 0.1]
//            [--settle 900] [--out bench/results/chaos.json]
// Prints progress on stderr and the report as one JSON line, last, on stdout; exits 1 when a count is not zero.
const { values } = parseArgs({
  options: {
    kills: { type: 'string' },
    seed: { type: 'string' },
    racks: { type: 'string' },
    'no-netbox': { type: 'boolean' },
    concurrency: { type: 'string' },
    'fault-share': { type: 'string' },
    settle: { type: 'string' },
    out: { type: 'string' },
  },
  strict: true,
});
const num = (name: string, v: string | undefined, fallback: number, min = 0): number => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, not ${v}`);
  return n;
};
const options = {
  ...defaultChaosOptions,
  kills: num('kills', values.kills, defaultChaosOptions.kills),
  seed: num('seed', values.seed, defaultChaosOptions.seed),
  campaignRacks: num('racks', values.racks, defaultChaosOptions.campaignRacks, 1),
  netbox: !values['no-netbox'],
  concurrency: num('concurrency', values.concurrency, defaultChaosOptions.concurrency, 1),
  faultShare: num('fault-share', values['fault-share'], defaultChaosOptions.faultShare),
  settleS: num('settle', values.settle, defaultChaosOptions.settleS, 1),
};

// The satellite loads one prebuilt workflow bundle at every restart instead of bundling anew.
const bundle = join(repoRoot, '.run', `chaos-workflow-bundle-${process.pid}.js`);
mkdirSync(dirname(bundle), { recursive: true });
await buildWorkflowBundle(bundle);
process.env['FLEET_TEST_WORKFLOW_BUNDLE'] = bundle;
let report: ChaosReport;
try {
  report = await runChaos(options);
} finally {
  rmSync(bundle, { force: true });
}
const failing = ['lost_intents', 'open_jobs', 'double_flashes', 'false_successes', 'duplicate_power_actions']
  .concat('projection_mismatches')
  .filter((k) => report[k as keyof ChaosReport] !== 0);
for (const [check, ids] of Object.entries(report.offenders)) console.error(`${check}:\n  ${ids.join('\n  ')}`);
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
const { offenders: _offenders, ...line } = report;
console.log(JSON.stringify(line));
process.exit(failing.length ? 1 : 0);
