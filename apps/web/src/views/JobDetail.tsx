import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { unwrap, type Job } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { isTerminal, useJob, useJobChildren, useRack } from '../api/queries';
import { useCan } from '../api/role';
import { ConfirmAction } from '../components/ConfirmAction';
import { CountsFromMap } from '../components/Counts';
import { JobTable, jobTarget } from '../components/JobTable';
import { Badge, ErrorView, Loading } from '../components/Status';
import { absoluteTime, duration, Time } from '../components/Time';
import { DecisionPanel } from './JobDecision';

const route = getRouteApi('/jobs/$jobId');
const temporalUi = (import.meta.env['VITE_TEMPORAL_UI_URL'] as string | undefined) ?? 'http://127.0.0.1:8233';

/** The hub's link to the workflow when it has one; else the configured Temporal UI (workflow id = job id). */
export function temporalLink(job: Job): string {
  return job.links.temporal_ui ?? `${temporalUi.replace(/\/$/, '')}/namespaces/default/workflows/${job.id}`;
}

export function JobDetail() {
  const { jobId } = route.useParams();
  const job = useJob(jobId);
  const rackId = job.data?.target.rack_id ?? '';
  const rack = useRack(rackId, !!rackId);
  const names = new Map<string, string>(rack.data?.elevation.map((s) => [s.device_id, s.name]));
  if (rack.data) names.set(rack.data.id, rack.data.name);
  if (job.isPending) return <Loading what="job" />;
  if (job.error) return <ErrorView error={job.error} title="The job could not be loaded" />;
  const j = job.data;
  return (
    <>
      <h1>
        {j.kind} <Badge value={j.state} />
      </h1>
      <JobFacts job={j} names={names} />
      <DecisionPanel job={j} names={names} />
      <JobError job={j} />
      <Timeline job={j} />
      {(j.children?.total ?? 0) > 0 && <Children job={j} names={names} />}
    </>
  );
}

function JobFacts({ job: j, names }: { job: Job; names: ReadonlyMap<string, string> }) {
  const operator = useCan('operator');
  const navigate = useNavigate();
  return (
    <section aria-labelledby="facts" className="card">
      <h2 id="facts" className="visually-hidden">
        Job facts
      </h2>
      <dl className="facts">
        <div>
          <dt>Id</dt>
          <dd>
            <code>{j.id}</code>
          </dd>
        </div>
        <div>
          <dt>Target</dt>
          <dd>
            {j.target.device_id ? (
              <Link to="/devices/$deviceId" params={{ deviceId: j.target.device_id }}>
                {jobTarget(j, names)}
              </Link>
            ) : j.target.rack_id ? (
              <Link to="/racks/$rackId" params={{ rackId: j.target.rack_id }} search={{ axis: 'jobs' }}>
                {jobTarget(j, names)}
              </Link>
            ) : (
              jobTarget(j)
            )}
          </dd>
        </div>
        {j.parent_id && (
          <div>
            <dt>Part of</dt>
            <dd>
              <Link to="/jobs/$jobId" params={{ jobId: j.parent_id }}>
                parent job {j.parent_id.slice(0, 8)}
              </Link>
            </dd>
          </div>
        )}
        <div>
          <dt>Requested</dt>
          <dd>
            <Time iso={j.created_at} /> by {j.created_by}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <Time iso={j.started_at} />
          </dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>
            <Time iso={j.finished_at} />
          </dd>
        </div>
        {j.progress && (
          <div>
            <dt>Progress</dt>
            <dd>
              {j.progress.stage}
              {j.progress.percent !== undefined && ` (${Math.round(j.progress.percent)} %)`}
              {j.progress.message && ` — ${j.progress.message}`}
            </dd>
          </div>
        )}
      </dl>
      <p className="actions">
        <a href={temporalLink(j)} target="_blank" rel="noreferrer">
          Open the workflow in the Temporal UI
        </a>
        {operator && !isTerminal(j.state) && j.state !== 'cancelling' && (
          <ConfirmAction
            label="Cancel job"
            title={`Cancel ${j.kind} on ${jobTarget(j, names)}?`}
            danger
            run={() =>
              unwrap(
                api().POST('/v1/jobs/{id}/cancel', {
                  params: { path: { id: j.id } },
                  headers: { 'Idempotency-Key': idempotencyKey() },
                }),
              )
            }
            onDone={() => void navigate({ to: '/jobs/$jobId', params: { jobId: j.id } })}
          >
            <p>Steps not yet done are skipped; a step in flight finishes or is cancelled by the device driver.</p>
          </ConfirmAction>
        )}
      </p>
    </section>
  );
}

function JobError({ job: j }: { job: Job }) {
  if (!j.error) return null;
  return (
    <div className="error" role="alert">
      <strong>Failed:</strong> <code>{j.error.code}</code>
      <p>{j.error.message}</p>
      {j.error.details !== undefined && <pre>{JSON.stringify(j.error.details, null, 2)}</pre>}
    </div>
  );
}

type Stage = NonNullable<Job['timeline']>['stages'][number];

/** One bar per stage, placed on a shared time axis from the first stage's start to now (or the last finish). */
function Timeline({ job: j }: { job: Job }) {
  const stages = j.timeline?.stages ?? [];
  if (stages.length === 0) return null;
  const now = Date.now();
  const starts = stages.flatMap((s) => (s.startedAt ? [Date.parse(s.startedAt)] : []));
  const t0 = Math.min(...starts, j.started_at ? Date.parse(j.started_at) : now);
  const t1 = Math.max(
    ...stages.map((s) => (s.finishedAt ? Date.parse(s.finishedAt) : s.startedAt ? now : t0)),
    j.finished_at ? Date.parse(j.finished_at) : t0 + 1000,
  );
  const span = Math.max(t1 - t0, 1000);
  return (
    <section aria-labelledby="timeline" className="card">
      <h2 id="timeline">Stages</h2>
      <ol className="timeline">
        {stages.map((s, i) => (
          <StageBar key={`${s.name}-${i}`} stage={s} t0={t0} span={span} now={now} />
        ))}
      </ol>
      <p className="muted">
        Axis: {absoluteTime(new Date(t0).toISOString())} to {absoluteTime(new Date(t0 + span).toISOString())} (
        {duration(span / 1000)})
      </p>
    </section>
  );
}

function StageBar({ stage: s, t0, span, now }: { stage: Stage; t0: number; span: number; now: number }) {
  const start = s.startedAt ? Date.parse(s.startedAt) : undefined;
  const end = s.finishedAt ? Date.parse(s.finishedAt) : start !== undefined ? now : undefined;
  const left = start !== undefined ? ((start - t0) / span) * 100 : 0;
  const width = start !== undefined && end !== undefined ? Math.max(((end - start) / span) * 100, 0.8) : 0;
  const took = s.durationS ?? (start !== undefined && end !== undefined ? (end - start) / 1000 : undefined);
  return (
    <li className="stage" data-status={s.status}>
      <span className="stage-name">{s.name}</span>
      <span className="stage-track" aria-hidden="true">
        {width > 0 && (
          <span className={`stage-bar tone-${stageTone(s.status)}`} style={{ left: `${left}%`, width: `${width}%` }} />
        )}
      </span>
      <span className="stage-status">
        <Badge value={s.status} />
        {took !== undefined && ` ${duration(took)}`}
        {s.message && <span className="muted"> {s.message}</span>}
      </span>
    </li>
  );
}

const stageTone = (status: Stage['status']) =>
  ({ queued: 'unknown', running: 'busy', completed: 'ok', failed: 'bad', skipped: 'off', cancelled: 'off' })[status];

/** Per-device children with the RMS-style aggregate: counts by state, then each child. */
function Children({ job: j, names }: { job: Job; names: ReadonlyMap<string, string> }) {
  const children = useJobChildren(j.id, j.state);
  const byName = (a: Job, b: Job) => jobTarget(a, names).localeCompare(jobTarget(b, names));
  return (
    <section aria-labelledby="children" className="card">
      <h2 id="children">Per-device jobs ({j.children?.total})</h2>
      {j.children && <CountsFromMap caption="By state" counts={j.children.by_state} badge />}
      <ErrorView error={children.error} />
      {children.isPending ? (
        <Loading what="per-device jobs" />
      ) : (
        <JobTable jobs={[...(children.data ?? [])].sort(byName)} caption="Per-device jobs" names={names} />
      )}
    </section>
  );
}
