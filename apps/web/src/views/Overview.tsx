import { Link } from '@tanstack/react-router';
import type { Site } from '@fleet/client';
import { useCampaigns, useComplianceSummary, useIssues, useJobs, useSiteSummary, useSites } from '../api/queries';
import { CountsFromMap } from '../components/Counts';
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

/** The hub counts devices without a role under ''; a role slug never has spaces or parentheses. */
const noRole = '(no role)';
const roleLabels = (byRole: Record<string, number>) =>
  Object.fromEntries(Object.entries(byRole).map(([role, n]) => [role || noRole, n]));

function SiteSummary({ site }: { site: Site }) {
  const summary = useSiteSummary(site.id);
  const compliance = useComplianceSummary(site.id);
  const headingId = `site-${site.id}`;
  const s = summary.data;
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
      {summary.isPending && <Loading what={`summary of ${site.id}`} />}
      <ErrorView error={summary.error} title={`The summary of ${site.id} could not be loaded`} />
      {s && (
        <>
          <dl className="facts">
            <div>
              <dt>Devices</dt>
              <dd>{s.devices}</dd>
            </div>
            <div>
              <dt>Racks</dt>
              <dd>{s.racks}</dd>
            </div>
            <div>
              <dt>Jobs queued or running</dt>
              <dd>{s.running_jobs}</dd>
            </div>
            <div>
              <dt>Open inventory issues</dt>
              <dd>{s.open_issues > 0 ? <strong>{s.open_issues}</strong> : s.open_issues}</dd>
            </div>
            <div>
              <dt>Counted</dt>
              <dd>
                <Time iso={s.as_of} compact />
              </dd>
            </div>
          </dl>
          <div className="grid4">
            <CountsFromMap caption={`Devices by role (${s.devices})`} counts={roleLabels(s.by_role)} />
            <CountsFromMap caption="Power state" counts={s.by_power_state} badge />
            <CountsFromMap caption="Lifecycle" counts={s.by_lifecycle_state} badge />
            {compliance.data ? (
              <CountsFromMap caption="Firmware compliance" counts={compliance.data.by_status} badge />
            ) : (
              <p className="muted">Firmware compliance {compliance.isPending ? 'loading…' : 'not available'}</p>
            )}
          </div>
        </>
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
