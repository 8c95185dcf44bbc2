import { Link } from '@tanstack/react-router';
import type { Job } from '@fleet/client';
import { Badge } from './Status';
import { Time } from './Time';

/** What a job acts on, by name when `names` (device or rack id to name) knows it. */
export function jobTarget(job: Job, names?: ReadonlyMap<string, string>): string {
  const t = job.target;
  if (t.device_id) return `device ${names?.get(t.device_id) ?? t.device_id.slice(0, 8)}`;
  if (t.rack_id) return `rack ${names?.get(t.rack_id) ?? t.rack_id.slice(0, 8)}`;
  return t.site_id ? `site ${t.site_id}` : '—';
}

export function JobTable({
  jobs,
  caption,
  names,
}: {
  jobs: readonly Job[];
  caption: string;
  names?: ReadonlyMap<string, string>;
}) {
  if (jobs.length === 0) return <p className="muted">{caption}: none.</p>;
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Job</th>
          <th scope="col">State</th>
          <th scope="col">Target</th>
          <th scope="col">Stage</th>
          <th scope="col">Created</th>
          <th scope="col">By</th>
        </tr>
      </thead>
      <tbody>
        {jobs.map((job) => (
          <tr key={job.id}>
            <td>
              <Link to="/jobs/$jobId" params={{ jobId: job.id }}>
                {job.kind}
              </Link>{' '}
              <code className="muted">{job.id.slice(0, 8)}</code>
            </td>
            <td>
              <Badge value={job.state} />
              {job.error && <code className="err-code"> {job.error.code}</code>}
            </td>
            <td>{jobTarget(job, names)}</td>
            <td>{job.timeline?.currentStage ?? job.progress?.stage ?? '—'}</td>
            <td>
              <Time iso={job.created_at} compact />
            </td>
            <td>{job.created_by}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
