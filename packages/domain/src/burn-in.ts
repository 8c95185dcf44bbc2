/**
 * Burn-in tests and their verdicts (docs/burn-in.md). A site runs each test as a SLURM batch job; the satellite turns
 * the job's end and its output into one verdict per tray and test. Verdicts fail closed: only a test that ran, ended
 * well and reported a pass for that very tray passes; anything else is a failure with its reason. Pure (no zod): the
 * burn-in workflow imports it.
 */

export const burnInTests = ['gpu_stress', 'memory', 'nvlink_allreduce'] as const;
export type BurnInTest = (typeof burnInTests)[number];

/** A tray test runs one job per compute tray; a rack test one job over every tray of the rack's NVLink domain. */
export type BurnInScope = 'tray' | 'rack';

export const burnInTestTable = {
  gpu_stress: { scope: 'tray', what: 'Stress every GPU of the tray and check it stays healthy' },
  memory: { scope: 'tray', what: "Test the tray's memory: Grace LPDDR5X and each GPU's HBM" },
  nvlink_allreduce: { scope: 'rack', what: "An all-reduce across the rack's NVLink domain, every GPU link in use" },
} as const satisfies Record<BurnInTest, { scope: BurnInScope; what: string }>;

export function isBurnInTest(value: string): value is BurnInTest {
  return (burnInTests as readonly string[]).includes(value);
}

/** Why a test did not pass. CamelCase, like condition reasons. */
export const burnInFailureReasons = [
  /** The test ran and found a fault; the message lists what it found. */
  'TestFailed',
  /** SLURM refused the job (unknown partition, bad request): the test could not run. */
  'SubmitRefused',
  /** Still PENDING at the start deadline; `slurmReason` says why (PartitionDown, Resources, ...). */
  'NeverStarted',
  /** Ended by SLURM at its time limit (TIMEOUT), or still running well past it. */
  'TimedOut',
  /** Cancelled by someone other than this burn-in. */
  'Cancelled',
  /** The node failed under the job (NODE_FAIL, BOOT_FAIL). */
  'NodeFailed',
  /** Another end SLURM gives a job that did not finish its work (OUT_OF_MEMORY, PREEMPTED, DEADLINE). */
  'JobFailed',
  /** The script exited non-zero without reporting a test failure. */
  'NonZeroExit',
  /** The script was killed by a signal. */
  'Signalled',
  /** The output file could not be read. */
  'OutputUnreadable',
  /** The output has no result line. */
  'NoResult',
  /** A result line that is not the expected JSON, or more than one. */
  'UnparsableResult',
  /** The result is for another test or another job. */
  'WrongTest',
  /** The result names other trays than the ones tested, or misses one. */
  'WrongDevice',
  /** slurmctld no longer knows the job (purged), so its end cannot be known. */
  'JobLost',
] as const;
export type BurnInFailureReason = (typeof burnInFailureReasons)[number];

/** One tray's verdict for one test. */
export interface BurnInVerdict {
  deviceId: string;
  test: BurnInTest;
  verdict: 'pass' | 'fail';
  /** Null exactly when the verdict is pass. */
  reason: BurnInFailureReason | null;
  /** For people: what the test found, or why it could not say. */
  message: string;
  /** The SLURM job that ran the test; null when none was submitted. */
  slurmJobId: number | null;
  /** The job's state and state reason when the verdict was made (PENDING / PartitionDown). */
  slurmState: string | null;
  slurmReason: string | null;
}

/** A compute tray to burn in. */
export interface BurnInTray {
  deviceId: string;
  /**
   * The tray as the site knows it: the SLURM node that runs its tests on real hardware, the BMC id in the simulated
   * site. Letters, digits, `.`, `_`, `-`.
   */
  name: string;
}

export interface BurnInInput {
  /** The Fleet job: part of every SLURM job name, so a retried activity finds its jobs instead of submitting. */
  jobId: string;
  /** Burn-in run of this job, from 1; a deliberate re-run of the tests takes the next number (new SLURM jobs). */
  attempt: number;
  trays: BurnInTray[];
  /** The rack whose NVLink domain the trays form; required for a rack test. */
  rackId?: string;
  tests: BurnInTest[];
}

export interface BurnInResult {
  /** Every test ran and passed on every tray. */
  passed: boolean;
  /** One per tray and test, in input order (trays, then tests). */
  verdicts: BurnInVerdict[];
}

/** Activity signatures, shared by the satellite (implementation) and workflows (types only). */
export interface BurnInActivities {
  runBurnIn(input: BurnInInput): Promise<BurnInResult>;
}

/** The verdict a burn-in gets from its tests: a pass needs at least one verdict and no failure. */
export function burnInPassed(verdicts: readonly BurnInVerdict[]): boolean {
  return verdicts.length > 0 && verdicts.every((v) => v.verdict === 'pass' && v.reason === null);
}
