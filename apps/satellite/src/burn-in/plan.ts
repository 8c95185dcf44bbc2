import {
  burnInTestTable,
  isBurnInTest,
  type BurnInInput,
  type BurnInScope,
  type BurnInTest,
  type BurnInTray,
} from '@fleet/domain';

/** One SLURM job of a burn-in: a tray test on one tray, or a rack test over all of them. */
export interface PlannedJob {
  /** The SLURM job name, and the idempotency key: job id, tray (or rack), test and attempt. */
  name: string;
  test: BurnInTest;
  scope: BurnInScope;
  /** The trays the job tests, in input order: one for a tray test, every tray for a rack test. */
  trays: BurnInTray[];
}

/** Input the activity cannot run: never worth another attempt. */
export class BurnInInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BurnInInputError';
  }
}

/** What may go into a SLURM job name, a URL path and a job's environment without quoting. */
const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The SLURM job name of one test: the same for every attempt of the activity, so a retry finds the job an earlier
 * attempt submitted (submitOnce) instead of submitting it again; a new burn-in attempt makes new names.
 */
export function slurmJobName(jobId: string, subject: string, test: BurnInTest, attempt: number): string {
  return `fleet-burnin.${jobId}.${subject}.${test}.a${attempt}`;
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new BurnInInputError(message);
}

function checkInput(input: BurnInInput): void {
  check(SAFE.test(input.jobId), `jobId ${JSON.stringify(input.jobId)}: letters, digits, '.', '_', '-' only`);
  check(Number.isInteger(input.attempt) && input.attempt >= 1, `attempt ${input.attempt}: an integer from 1`);
  check(input.trays.length > 0, 'no trays to burn in');
  check(input.tests.length > 0, 'no tests to run');
  for (const t of input.tests) check(isBurnInTest(t), `unknown test ${JSON.stringify(t)}`);
  check(new Set(input.tests).size === input.tests.length, `a test is named twice: ${input.tests.join(', ')}`);
  for (const tray of input.trays) {
    check(SAFE.test(tray.deviceId), `tray deviceId ${JSON.stringify(tray.deviceId)} is not a plain identifier`);
    check(SAFE.test(tray.name), `tray name ${JSON.stringify(tray.name)} is not a plain identifier`);
  }
  check(new Set(input.trays.map((t) => t.deviceId)).size === input.trays.length, 'a tray deviceId is listed twice');
  check(new Set(input.trays.map((t) => t.name)).size === input.trays.length, 'a tray name is listed twice');
  const rackTests = input.tests.filter((t) => burnInTestTable[t].scope === 'rack');
  if (rackTests.length > 0)
    check(
      input.rackId !== undefined && SAFE.test(input.rackId),
      `${rackTests.join(', ')} runs over a rack: rackId must be given, letters, digits, '.', '_', '-'`,
    );
}

/** The jobs of a burn-in: each tray test once per tray, each rack test once over all trays. */
export function planBurnIn(input: BurnInInput): PlannedJob[] {
  checkInput(input);
  const jobs: PlannedJob[] = [];
  for (const test of input.tests) {
    const scope = burnInTestTable[test].scope;
    if (scope === 'rack') {
      const name = slurmJobName(input.jobId, `rack-${input.rackId}`, test, input.attempt);
      jobs.push({ name, test, scope, trays: input.trays });
    } else {
      for (const tray of input.trays)
        jobs.push({ name: slurmJobName(input.jobId, tray.deviceId, test, input.attempt), test, scope, trays: [tray] });
    }
  }
  return jobs;
}
