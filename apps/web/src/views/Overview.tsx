import { Link } from '@tanstack/react-router';
import type { Site } from '@fleet/client';
import { useCampaigns, useComplianceSummary, useIssues, useJobs, useSiteDevices, useSites } from '../api/queries';
import { CountTable, CountsFromMap } from '../components/Counts';
import { IssueTable } from '../components/IssueTable';
import { JobTable } from '../components/JobTable';
import { ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';

export function Overview() {
  const sites = useSites();
  return (
    <>
      <h1>Fleet overview</h1>
      {sites.isPending && <Loading what="sites" />}
      <ErrorView error={sites.error} title="Sites could not be loaded" />
      {sites.data?.sync && (
        <p className={sites.data.sync.stale ? 'warn-box' : 'muted'}>
          NetBox mirror: {sites.data.sync.stale ? <strong>stale</strong> : 'fresh'}, last successful sync{' '}
          <Time iso={sites.data.sync.last_success_at} />
          {sites.data.sync.last_error && <> — last error: {sites.data.sync.last_error}</>}
        </p>
      )}
      {sites.data?.items.map((site) => (
        <SiteSummary key={site.id} site={site} />
      ))}
      {sites.data?.items.length === 0 && <p>No sites yet.</p>}
      <ActiveWork />
      <Issues />
    </>
  );
}

function SiteSummary({ site }: { site: Site }) {
  const devices = useSiteDevices(site.id);
  const compliance = useComplianceSummary(site.id);
  const headingId = `site-${site.id}`;
  return (
    <section aria-labelledby={headingId} className="card">
      <h2 id={headingId}>
        {site.name} {site.name !== site.id && <span className="muted">({site.id})</span>}
        {site.provenance.source === 'netbox' && site.provenance.stale && <span className="badge tone-warn">stale</span>}
      </h2>
      <p>
        <Link to="/sites" search={{ site: site.id }}>
          Racks
        </Link>{' '}
        ·{' '}
        <Link to="/devices" search={{ site: site.id }}>
          Devices
        </Link>{' '}
        ·{' '}
        <Link to="/jobs" search={{ site: site.id }}>
          Jobs
        </Link>
      </p>
      {devices.isPending && <Loading what={`devices of ${site.id}`} />}
      <ErrorView error={devices.error} />
      {devices.data && (
        <div className="grid4">
          <CountTable caption={`Devices by role (${devices.data.length})`} items={devices.data} by={(d) => d.role} />
          <CountTable caption="Power state" items={devices.data} by={(d) => d.power_state} badge />
          <CountTable caption="Lifecycle" items={devices.data} by={(d) => d.lifecycle_state} badge />
          {compliance.data ? (
            <CountsFromMap caption="Firmware compliance" counts={compliance.data.by_status} badge />
          ) : (
            <p className="muted">Firmware compliance {compliance.isPending ? 'loading…' : 'not available'}</p>
          )}
        </div>
      )}
    </section>
  );
}

function ActiveWork() {
  const jobs = useJobs({ state: ['queued', 'running', 'cancelling'] }, 50);
  const campaigns = useCampaigns({ state: ['queued', 'running', 'cancelling'] });
  return (
    <section aria-labelledby="active-work" className="card">
      <h2 id="active-work">Running jobs and campaigns</h2>
      {jobs.isPending && <Loading what="jobs" />}
      <ErrorView error={jobs.error} />
      {jobs.data && <JobTable jobs={jobs.data.items} caption="Jobs queued or running" />}
      <ErrorView error={campaigns.error} />
      {campaigns.data && (
        <ul>
          {campaigns.data.items.map((c) => (
            <li key={c.id}>
              <Link to="/campaigns/$campaignId" params={{ campaignId: c.id }}>
                {c.name}
              </Link>{' '}
              ({c.site_id}) — {c.job.state}, {c.plan.devices} devices
            </li>
          ))}
          {campaigns.data.items.length === 0 && <li className="muted">No campaign running.</li>}
        </ul>
      )}
    </section>
  );
}

function Issues() {
  const issues = useIssues();
  return (
    <section aria-labelledby="issues" className="card">
      <h2 id="issues">Inventory issues</h2>
      {issues.isPending && <Loading what="inventory issues" />}
      <ErrorView error={issues.error} />
      {issues.data && <IssueTable issues={issues.data.items} />}
    </section>
  );
}
