import { useId } from 'react';
import { getRouteApi } from '@tanstack/react-router';
import type { Job } from '@fleet/client';
import { useJobs, useSites, type JobFilter } from '../api/queries';
import type { JobSearch } from '../routes';
import { JobTable } from '../components/JobTable';
import { ErrorView, Loading } from '../components/Status';

const route = getRouteApi('/jobs');
const states: Job['state'][] = ['queued', 'running', 'succeeded', 'failed', 'cancelling', 'cancelled'];
const kinds: Job['kind'][] = [
  'device.power',
  'device.bmc_reset',
  'device.power_refresh',
  'batch.power',
  'rack.power',
  'rack.cold_reboot',
  'device.firmware_update',
  'device.firmware_refresh',
  'firmware.campaign',
  'switch.nvos_install',
  'switch.password_rotation',
  'switch.factory_reset',
  'switch.firmware_update',
  'switch.certificate_install',
];

function toFilter(s: JobSearch): JobFilter {
  return {
    ...(s.state ? { state: [s.state as Job['state']] } : {}),
    ...(s.kind ? { kind: [s.kind as Job['kind']] } : {}),
    ...(s.site ? { site_id: [s.site] } : {}),
  };
}

export function Jobs() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const jobs = useJobs(toFilter(search), 200);
  const sites = useSites();
  const id = useId();
  const set = (patch: Partial<JobSearch>) => void navigate({ search: (s) => ({ ...s, ...patch }), replace: true });
  const select = (key: keyof JobSearch, label: string, options: readonly string[]) => (
    <>
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <select
        id={`${id}-${key}`}
        value={search[key] ?? ''}
        onChange={(e) => set({ [key]: e.target.value || undefined })}
      >
        <option value="">Any</option>
        {options.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    </>
  );
  return (
    <>
      <h1>Jobs</h1>
      <form className="filters" role="search" aria-label="Filter jobs" onSubmit={(e) => e.preventDefault()}>
        {select('state', 'State', states)}
        {select('kind', 'Kind', kinds)}
        {select('site', 'Site', sites.data?.items.map((s) => s.id) ?? [])}
      </form>
      <ErrorView error={jobs.error} />
      {jobs.isPending ? (
        <Loading what="jobs" />
      ) : (
        <JobTable
          jobs={jobs.data?.items ?? []}
          caption="Jobs, newest first (top-level; a rack's per-device jobs are on its page)"
        />
      )}
    </>
  );
}
