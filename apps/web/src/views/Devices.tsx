import { useEffect, useId, useRef } from 'react';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { Device } from '@fleet/client';
import { useDevicePages, useRacks, useSites, type DeviceFilter } from '../api/queries';
import type { DeviceSearch } from '../routes';
import { Badge, ErrorView, Loading } from '../components/Status';

const route = getRouteApi('/devices');
const roles = ['compute-tray', 'nvlink-switch-tray', 'power-shelf'];
const powerStates = ['On', 'Off', 'PoweringOn', 'PoweringOff', 'Paused', 'Unknown'] as const;
const lifecycles = ['active', 'offline', 'planned', 'staged', 'failed', 'inventory', 'decommissioning'] as const;
type Power = (typeof powerStates)[number];
type Lifecycle = (typeof lifecycles)[number];

function toFilter(s: DeviceSearch): DeviceFilter {
  return {
    ...(s.site ? { site_id: [s.site] } : {}),
    ...(s.rack ? { rack_id: [s.rack] } : {}),
    ...(s.role ? { role: [s.role] } : {}),
    ...(s.power ? { power_state: [s.power as Power] } : {}),
    ...(s.lifecycle ? { lifecycle_state: [s.lifecycle as Lifecycle] } : {}),
    sort: 'name',
  };
}

export function Devices() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const pages = useDevicePages(toFilter(search));
  const set = (patch: Partial<DeviceSearch>) => void navigate({ search: (s) => ({ ...s, ...patch }), replace: true });
  const q = search.q?.toLowerCase() ?? '';
  const devices = (pages.data?.pages.flatMap((p) => p.items) ?? []).filter(
    (d) => !q || d.name.toLowerCase().includes(q) || (d.serial ?? '').toLowerCase().includes(q),
  );
  return (
    <>
      <h1>Devices</h1>
      <Filters search={search} set={set} />
      <ErrorView error={pages.error} />
      {pages.isPending ? (
        <Loading what="devices" />
      ) : (
        <DeviceGrid
          devices={devices}
          more={pages.hasNextPage}
          loadMore={() => !pages.isFetchingNextPage && void pages.fetchNextPage()}
        />
      )}
      {pages.isFetchingNextPage && <Loading what="more devices" />}
    </>
  );
}

function Filters({ search, set }: { search: DeviceSearch; set: (patch: Partial<DeviceSearch>) => void }) {
  const sites = useSites();
  const racks = useRacks(search.site);
  const id = useId();
  const select = (key: keyof DeviceSearch, label: string, options: readonly (readonly [string, string])[]) => (
    <>
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <select
        id={`${id}-${key}`}
        value={search[key] ?? ''}
        onChange={(e) => set({ [key]: e.target.value || undefined })}
      >
        <option value="">Any</option>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </>
  );
  return (
    <form className="filters" role="search" aria-label="Filter devices" onSubmit={(e) => e.preventDefault()}>
      {select('site', 'Site', sites.data?.items.map((s) => [s.id, s.id] as const) ?? [])}
      {select('rack', 'Rack', racks.data?.items.map((r) => [r.id, r.name] as const) ?? [])}
      {select(
        'role',
        'Role',
        roles.map((r) => [r, r] as const),
      )}
      {select(
        'power',
        'Power',
        powerStates.map((p) => [p, p] as const),
      )}
      {select(
        'lifecycle',
        'Lifecycle',
        lifecycles.map((l) => [l, l] as const),
      )}
      <label htmlFor={`${id}-q`}>Name or serial</label>
      <input id={`${id}-q`} value={search.q ?? ''} onChange={(e) => set({ q: e.target.value || undefined })} />
    </form>
  );
}

const columns = ['Name', 'Role', 'Node type', 'Site', 'Position', 'Power', 'Lifecycle', 'Firmware'];

/** Thousands of rows: only the visible ones are in the DOM; the next page loads as the end comes near. */
function DeviceGrid({ devices, more, loadMore }: { devices: Device[]; more: boolean; loadMore: () => void }) {
  const scroller = useRef<HTMLDivElement>(null);
  const rows = useVirtualizer({
    count: devices.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 36,
    overscan: 12,
  });
  const items = rows.getVirtualItems();
  const last = items.at(-1)?.index ?? 0;
  useEffect(() => {
    if (more && last >= devices.length - 50) loadMore();
  }, [more, last, devices.length, loadMore]);
  if (devices.length === 0) return <p className="muted">No device matches.</p>;
  return (
    <div
      role="table"
      aria-label={`Devices (${devices.length}${more ? '+' : ''})`}
      aria-rowcount={devices.length + 1}
      className="vtable"
    >
      <div role="rowgroup">
        <div role="row" className="vrow vhead" aria-rowindex={1}>
          {columns.map((c) => (
            <span role="columnheader" key={c}>
              {c}
            </span>
          ))}
        </div>
      </div>
      <div ref={scroller} className="vscroll" tabIndex={0} role="rowgroup" aria-label="Device rows, scrollable">
        <div style={{ height: rows.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const d = devices[item.index]!;
            return (
              <div
                role="row"
                key={d.id}
                aria-rowindex={item.index + 2}
                className="vrow"
                style={{ position: 'absolute', top: 0, transform: `translateY(${item.start}px)`, height: item.size }}
              >
                <span role="cell">
                  <Link to="/devices/$deviceId" params={{ deviceId: d.id }}>
                    {d.name}
                  </Link>
                </span>
                <span role="cell">{d.role ?? '—'}</span>
                <span role="cell">{d.node_type ?? '—'}</span>
                <span role="cell">{d.site_id}</span>
                <span role="cell">{d.position !== null ? `U${d.position}` : '—'}</span>
                <span role="cell">
                  <Badge value={d.power_state} />
                </span>
                <span role="cell">{d.lifecycle_state}</span>
                <span role="cell">{d.firmware_version ?? '—'}</span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
