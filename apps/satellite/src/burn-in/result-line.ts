import { z } from 'zod';

/** The word a result line starts with, followed by one space and the JSON (scripts.ts prints it). */
export const RESULT_MARK = 'FLEET_BURNIN_RESULT';

const TrayResult = z
  .object({
    /** The tray's name (BurnInTray.name). */
    device: z.string().min(1).max(200),
    verdict: z.enum(['pass', 'fail']),
    failures: z.array(z.string().max(2_000)).max(500),
  })
  .strict();

/** Version 1 of the line: what the test ran as (test, SLURM job) and a verdict per tray. */
const ResultLine = z
  .object({
    v: z.literal(1),
    test: z.string(),
    /** $SLURM_JOB_ID as the script saw it, so output from another job is never taken for this one's. */
    slurmJobId: z.string(),
    results: z.array(TrayResult).min(1).max(1_000),
  })
  .strict();
export type ResultLine = z.infer<typeof ResultLine>;

export type ResultParse =
  { ok: true; line: ResultLine } | { ok: false; reason: 'NoResult' | 'UnparsableResult'; message: string };

const clip = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * The one result line of a job's output. No line, two lines, a line that is not JSON (garbage, cut short) or JSON of
 * another shape are each a failure with what was wrong: a line is never half-believed.
 */
export function parseResultLine(output: string): ResultParse {
  const lines = output.split(/\r?\n/).filter((l) => l.startsWith(RESULT_MARK));
  if (lines.length === 0) return { ok: false, reason: 'NoResult', message: `no ${RESULT_MARK} line in the output` };
  if (lines.length > 1)
    return { ok: false, reason: 'UnparsableResult', message: `${lines.length} ${RESULT_MARK} lines: expected one` };
  const text = lines[0]!.slice(RESULT_MARK.length);
  if (!text.startsWith(' '))
    return { ok: false, reason: 'UnparsableResult', message: `result line is not "${RESULT_MARK} <json>"` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      reason: 'UnparsableResult',
      message: `result line is not JSON (${clip(why, 80)}): ${JSON.stringify(clip(text.trim()))}`,
    };
  }
  const parsed = ResultLine.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.map(String).join('.') : '(line)';
    return { ok: false, reason: 'UnparsableResult', message: `result line: ${where}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, line: parsed.data };
}

/** The last line of output that is not a result line, for a failure's message ("curl: (7) Failed to connect"). */
export function lastOutputLine(output: string): string | undefined {
  const line = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith(RESULT_MARK))
    .at(-1);
  return line === undefined ? undefined : clip(line, 200);
}
