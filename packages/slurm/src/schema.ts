import { z } from 'zod';

// The parts of slurmrestd's openapi/v0.0.38 answers this client reads. Objects drop the fields they do not name
// (zod's default), so a newer slurmrestd that adds fields still parses.

const apiError = z.object({
  error: z.string().optional(),
  error_code: z.number().int().optional(),
  error_number: z.number().int().optional(),
  description: z.string().optional(),
  source: z.string().optional(),
});

/** Every answer carries `errors` (empty on success); the openapi plugin may leave it out on 401/404 plain text. */
export const envelopeSchema = z.object({ errors: z.array(apiError).default([]) });

export const pingResponseSchema = envelopeSchema.extend({
  pings: z.array(
    z.object({
      hostname: z.string(),
      ping: z.string(),
      status: z.number().int(),
      mode: z.string().optional(),
    }),
  ),
});

export const submitResponseSchema = envelopeSchema.extend({
  job_id: z.number().int().positive(),
  job_submit_user_msg: z.string().optional(),
});

/** Times are Unix seconds, 0 when not reached yet. */
const unixSeconds = z.number().int().nullish();

export const rawJobSchema = z.object({
  job_id: z.number().int().positive(),
  name: z.string(),
  job_state: z.string(),
  state_reason: z.string().nullish(),
  state_description: z.string().nullish(),
  /** The raw wait status of the batch script: exit code << 8, or the signal number in the low 7 bits. */
  exit_code: z.number().int().nullish(),
  partition: z.string().nullish(),
  comment: z.string().nullish(),
  user_name: z.string().nullish(),
  nodes: z.string().nullish(),
  current_working_directory: z.string().nullish(),
  /** As submitted, with `%j` and friends unexpanded; empty for Slurm's default `slurm-%j.out`. */
  standard_output: z.string().nullish(),
  standard_error: z.string().nullish(),
  submit_time: unixSeconds,
  start_time: unixSeconds,
  end_time: unixSeconds,
});
export type RawJob = z.infer<typeof rawJobSchema>;

export const jobsResponseSchema = envelopeSchema.extend({ jobs: z.array(rawJobSchema) });
