import { useId } from 'react';
import { getRouteApi, Link } from '@tanstack/react-router';
import type { Rack } from '@fleet/client';
import { useRacks, useSites } from '../api/queries';
import { Badge, ErrorView, Loading } from '../components/Status';

const route = getRouteApi('/sites');

export function Sites() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const sites = useSites();
  const racks = useRacks(search.site);
  const siteId = useId();
  const qId = useId();
  const q = search.q?.toLowerCase() ?? '';
  const shown = racks.data?.items.filter((r) => !q || r.name.toLowerCase().includes(q)) ?? [];
  const set = (patch: { site?: string | undefined; q?: string | undefined }) =>
    void navigate({ search: (s) => ({ ...s, ...patch }), replace: true });
  return (
    <>
      <h1>Sites and racks</h1>
      <ErrorView error={sites.error} />
      <form className="filters" role="search" aria-label="Filter racks" onSubmit={(e) => e.preventDefault()}>
        <label htmlFor={siteId}>Site</label>
        <select id={siteId} value={search.site ?? ''} onChange={(e) => set({ site: e.target.value || undefined })}>
          <option value="">All sites</option>
          {sites.data?.items.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name} ({s.id})
            </option>
          ))}
        </select>
        <label htmlFor={qId}>Rack name</label>
        <input id={qId} value={search.q ?? ''} onChange={(e) => set({ q: e.target.value || undefined })} />
      </form>
      {sites.data && (
        <table>
          <caption>Sites</caption>
          <thead>
            <tr>
              <th scope="col">Site</th>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Satellite</th>
              <th scope="col">Source</th>
            </tr>
          </thead>
          <tbody>
            {sites.data.items.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link to="/sites" search={{ site: s.id }}>
                    {s.id}
                  </Link>
                </td>
                <td>{s.name}</td>
                <td>
                  <Badge value={s.status} /> {s.state === 'draining' && <Badge value="draining" />}
                </td>
                <td title={s.satellite.last_seen_at ? `last poll ${s.satellite.last_seen_at}` : 'no poll seen'}>
                  <Badge value={s.satellite.status} />
                </td>
                <td>{provenanceText(s.provenance)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {racks.isPending && <Loading what="racks" />}
      <ErrorView error={racks.error} />
      {racks.data && <RackTable racks={shown} />}
    </>
  );
}

export function provenanceText(p: Rack['provenance']): string {
  if (p.source === 'api') return 'registered by API';
  return p.stale ? 'NetBox (stale)' : 'NetBox';
}

function RackTable({ racks }: { racks: readonly Rack[] }) {
  return (
    <table>
      <caption>Racks ({racks.length})</caption>
      <thead>
        <tr>
          <th scope="col">Rack</th>
          <th scope="col">Site</th>
          <th scope="col">Type</th>
          <th scope="col">Status</th>
          <th scope="col">Height</th>
          <th scope="col">Devices</th>
          <th scope="col">Source</th>
        </tr>
      </thead>
      <tbody>
        {racks.map((r) => (
          <tr key={r.id}>
            <td>
              <Link to="/racks/$rackId" params={{ rackId: r.id }}>
                {r.name}
              </Link>
            </td>
            <td>{r.site_id}</td>
            <td>{r.rack_type ?? '—'}</td>
            <td>
              <Badge value={r.status} />
            </td>
            <td>{r.u_height} U</td>
            <td className="num">{r.device_count ?? '—'}</td>
            <td>{provenanceText(r.provenance)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
