import { getRouteApi, Link } from '@tanstack/react-router';
import type { components } from '@fleet/client';
import { useSites, useSlaBreaches, type SlaBreachFilter } from '../api/queries';
import { FilterSelect, LoadMore } from '../components/FilterSelect';
import { Badge, ErrorView, Loading } from '../components/Status';
import { duration, Time } from '../components/Time';
import type { SlaSearch } from '../routes';

type Breach = components['schemas']['SlaBreach'];

const route = getRouteApi('/sla');
const objectTypes: readonly Breach['object_type'][] = ['device', 'job', 'campaign'];

function toFilter(s: SlaSearch): SlaBreachFilter {
  return {
    ...(s.status === 'open' || s.status === 'resolved' ? { status: s.status } : {}),
    ...(s.type ? { object_type: [s.type as Breach['object_type']] } : {}),
    ...(s.site ? { site_id: [s.site] } : {}),
    ...(s.object ? { object_id: [s.object] } : {}),
  };
}

export function SlaBreaches() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const breaches = useSlaBreaches(toFilter(search));
  const sites = useSites();
  const set = (patch: Partial<SlaSearch>) => void navigate({ search: (s) => ({ ...s, ...patch }), replace: true });
  const items = breaches.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <h1>SLA breaches</h1>
      <p className="muted">
        Devices, jobs and campaigns that stayed in a state longer than its limit, found by the workflow agent; a breach
        stays open until its object moves on.
      </p>
      <form className="filters" role="search" aria-label="Filter SLA breaches" onSubmit={(e) => e.preventDefault()}>
        <FilterSelect
          label="Status"
          value={search.status}
          options={['open', 'resolved']}
          onChange={(status) => set({ status })}
        />
        <FilterSelect label="Object" value={search.type} options={objectTypes} onChange={(type) => set({ type })} />
        <FilterSelect
          label="Site"
          value={search.site}
          options={sites.data?.items.map((s) => s.id) ?? []}
          onChange={(site) => set({ site })}
        />
        {search.object && (
          <span>
            Only <code>{search.object.slice(0, 8)}</code>{' '}
            <button type="button" onClick={() => set({ object: undefined })}>
              Every object
            </button>
          </span>
        )}
      </form>
      <ErrorView error={breaches.error} title="The SLA breaches could not be loaded" />
      {breaches.isPending ? (
        <Loading what="SLA breaches" />
      ) : items.length === 0 ? (
        <p className="muted">No SLA breach matches.</p>
      ) : (
        <BreachTable
          breaches={items}
          caption={`SLA breaches, newest first (${items.length}${breaches.hasNextPage ? '+' : ''})`}
        />
      )}
      <LoadMore
        more={breaches.hasNextPage}
        loading={breaches.isFetchingNextPage}
        load={() => void breaches.fetchNextPage()}
      />
    </>
  );
}

/** The breached object as a link to its page. */
function ObjectLink({ breach: b }: { breach: Breach }) {
  const name = b.object_name ?? b.object_id.slice(0, 8);
  if (b.object_type === 'device')
    return (
      <Link to="/devices/$deviceId" params={{ deviceId: b.object_id }}>
        device {name}
      </Link>
    );
  if (b.object_type === 'campaign')
    return (
      <Link to="/campaigns/$campaignId" params={{ campaignId: b.object_id }}>
        campaign {name}
      </Link>
    );
  return (
    <Link to="/jobs/$jobId" params={{ jobId: b.object_id }}>
      {b.job_kind ?? 'job'} {name}
    </Link>
  );
}

function BreachTable({ breaches, caption }: { breaches: readonly Breach[]; caption: string }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Object</th>
          <th scope="col">SLA</th>
          <th scope="col">State</th>
          <th scope="col">Limit</th>
          <th scope="col">Overdue</th>
          <th scope="col">In state since</th>
          <th scope="col">Status</th>
          <th scope="col">Escalation</th>
        </tr>
      </thead>
      <tbody>
        {breaches.map((b) => (
          <tr key={b.id}>
            <td>
              <ObjectLink breach={b} />
              {b.site_id && <span className="muted"> · {b.site_id}</span>}
            </td>
            <td>
              <code>{b.sla_key}</code>
            </td>
            <td>{b.state}</td>
            <td>{duration(b.limit_s)}</td>
            <td>{duration(b.overdue_s)}</td>
            <td>
              <Time iso={b.since} compact />
            </td>
            <td>
              <Badge value={b.resolved_at ? 'resolved' : 'open'} />
              {b.resolved_at && (
                <span className="muted">
                  {' '}
                  {b.resolution} <Time iso={b.resolved_at} compact />
                </span>
              )}
            </td>
            <td>
              {b.deliveries.length === 0
                ? '—'
                : b.deliveries.map((d) => (
                    <div key={d.id}>
                      {d.webhook} {d.event}: <Badge value={d.status} />
                      {d.last_error && <span className="muted"> {d.last_error}</span>}
                    </div>
                  ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
