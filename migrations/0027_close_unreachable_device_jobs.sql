-- Device jobs left queued under a parent that had already ended: a campaign or rack sequence cancelled before its
-- start was dispatched, or whose start failed for good, ended without closing them, and each held its device for ever
-- (one open job per device). Their parent now closes them as it ends (cancelIfNotStarted, failJobBeforeStart); this
-- closes the ones left by the code before. A child with a start of its own still pending (a batch's) is left to it.
UPDATE "jobs" AS c
SET "state" = 'cancelled', "finished_at" = now(), "updated_at" = now(),
  "error" = '{"code": "NOT_REACHED", "message": "not reached: the job ended before it started"}'::jsonb
FROM "jobs" AS p
WHERE c."parent_id" = p."id" AND c."state" = 'queued' AND p."state" IN ('succeeded', 'failed', 'cancelled')
  -- A parent whose start reached Temporal had its children closed by the agent with its end (or they are its
  -- workflow's to run): only the parents that never started are in question.
  AND NOT EXISTS (
    SELECT 1 FROM "intents" AS pi WHERE pi."job_id" = p."id" AND pi."kind" = 'start' AND pi."status" = 'dispatched'
  )
  AND NOT EXISTS (
    SELECT 1 FROM "intents" AS i WHERE i."job_id" = c."id" AND i."kind" = 'start' AND i."status" = 'pending'
  );
