import { getRouteApi, Link } from '@tanstack/react-router';
import type { components } from '@fleet/client';
import { useRmaCases, useSites, type RmaFilter } from '../api/queries';
import { FilterSelect, LoadMore } from '../components/FilterSelect';
import { Badge, ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';
import type { RmaSearch } from '../routes';

export type RmaCase = components['schemas']['RmaCase'];
type RmaState = RmaCase['state'];

const route = getRouteApi('/rma');
export const rmaStates: readonly RmaState[] = ['open', 'shipped', 'replaced', 'revalidating', 'closed'];

function toFilter(s: RmaSearch): RmaFilter {
  return {
    ...(s.state ? { state: [s.state as RmaState] } : {}),
    ...(s.site ? { site_id: [s.site] } : {}),
    ...(s.device ? { device_id: [s.device] } : {}),
  };
}

export function Rma() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const cases = useRmaCases(toFilter(search));
  const sites = useSites();
  const set = (patch: Partial<RmaSearch>) => void navigate({ search: (s) => ({ ...s, ...patch }), replace: true });
  const items = cases.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <h1>RMA cases</h1>
      <p className="muted">
        A failed part to its vendor and back: open → shipped → replaced → revalidating → closed. A remediation that runs
        out of steps opens one; so may an operator, from the device&apos;s page.
      </p>
      <form className="filters" role="search" aria-label="Filter RMA cases" onSubmit={(e) => e.preventDefault()}>
        <FilterSelect label="State" value={search.state} options={rmaStates} onChange={(state) => set({ state })} />
        <FilterSelect
          label="Site"
          value={search.site}
          options={sites.data?.items.map((s) => s.id) ?? []}
          onChange={(site) => set({ site })}
        />
        {search.device && (
          <span>
            Device <code>{search.device.slice(0, 8)}</code>{' '}
            <button type="button" onClick={() => set({ device: undefined })}>
              Any device
            </button>
          </span>
        )}
      </form>
      <ErrorView error={cases.error} title="The RMA cases could not be loaded" />
      {cases.isPending ? (
        <Loading what="RMA cases" />
      ) : items.length === 0 ? (
        <p className="muted">No RMA case matches.</p>
      ) : (
        <RmaTable cases={items} caption={`RMA cases, newest first (${items.length}${cases.hasNextPage ? '+' : ''})`} />
      )}
      <LoadMore more={cases.hasNextPage} loading={cases.isFetchingNextPage} load={() => void cases.fetchNextPage()} />
    </>
  );
}

function RmaTable({ cases, caption }: { cases: readonly RmaCase[]; caption: string }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Case</th>
          <th scope="col">State</th>
          <th scope="col">Device</th>
          <th scope="col">Site</th>
          <th scope="col">Vendor case</th>
          <th scope="col">Opened</th>
          <th scope="col">Updated</th>
        </tr>
      </thead>
      <tbody>
        {cases.map((c) => (
          <tr key={c.id}>
            <td>
              <Link to="/rma/$caseId" params={{ caseId: c.id }}>
                {c.failed_part}
              </Link>{' '}
              <code className="muted">{c.id.slice(0, 8)}</code>
            </td>
            <td>
              <Badge value={c.state} />
            </td>
            <td>
              <Link to="/devices/$deviceId" params={{ deviceId: c.device_id }}>
                device {c.device_id.slice(0, 8)}
              </Link>
            </td>
            <td>{c.site_id}</td>
            <td>{c.vendor_case_id ?? '—'}</td>
            <td>
              <Time iso={c.created_at} compact /> by {c.opened_by}
            </td>
            <td>
              <Time iso={c.updated_at} compact />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
