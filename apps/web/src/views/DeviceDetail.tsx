import { useId, useState } from 'react';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { heldText, isApproval, unwrap, type Approval, type DeviceDetail as Device, type Job } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { useDevice, useJobs, usePackages, useRackCompliance } from '../api/queries';
import { useCan } from '../api/role';
import { AuditLog } from '../components/AuditLog';
import { ConfirmAction } from '../components/ConfirmAction';
import { Facts, type FactRows } from '../components/Facts';
import { IssueTable } from '../components/IssueTable';
import { JobTable } from '../components/JobTable';
import { Badge, ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';
import { HealthAndHolds } from './DeviceHealth';
import { Lifecycle } from './DeviceLifecycle';

const route = getRouteApi('/devices/$deviceId');

export function DeviceDetail() {
  const { deviceId } = route.useParams();
  const device = useDevice(deviceId);
  const jobs = useJobs({ device_id: [deviceId] }, 50);
  if (device.isPending) return <Loading what="device" />;
  if (device.error) return <ErrorView error={device.error} title="The device could not be loaded" />;
  const d = device.data;
  return (
    <>
      <h1>
        {d.name} <Badge value={d.power_state} />
      </h1>
      <DeviceActions device={d} />
      <div className="grid2">
        <Identity device={d} />
        <Network device={d} />
      </div>
      <Lifecycle device={d} />
      <HealthAndHolds device={d} />
      <Firmware device={d} />
      <section aria-labelledby="jobs" className="card">
        <h2 id="jobs">Jobs on this device</h2>
        <ErrorView error={jobs.error} />
        {jobs.isPending ? <Loading what="jobs" /> : <JobTable jobs={jobs.data?.items ?? []} caption="Latest jobs" />}
      </section>
      <section aria-labelledby="issues" className="card">
        <h2 id="issues">Inventory issues</h2>
        <IssueTable issues={d.inventory_issues} />
      </section>
      <section aria-labelledby="audit" className="card">
        <h2 id="audit">Audit trail</h2>
        <AuditLog
          filter={{ target: [`device/${d.id}`] }}
          caption="Accepted requests on this device, newest first"
          empty="No request has acted on this device yet."
        />
        <p>
          <Link to="/audit" search={{ target: `device/${d.id}` }}>
            Open in the audit log
          </Link>{' '}
          <span className="muted">(to filter by time or actor; rack-wide actions name the rack)</span>
        </p>
      </section>
    </>
  );
}

function Identity({ device: d }: { device: Device }) {
  const rows: FactRows = [
    ['Role', d.role],
    ['Node type', d.node_type],
    ['Vendor / model', [d.vendor, d.model].filter(Boolean).join(' ') || null],
    ['Serial', d.serial],
    [
      'Site',
      <Link to="/sites" search={{ site: d.site_id }}>
        {d.site_id}
      </Link>,
    ],
    [
      'Rack',
      d.rack_id ? (
        <Link to="/racks/$rackId" params={{ rackId: d.rack_id }}>
          elevation{d.position !== null ? `, U${d.position}` : ''} ({d.face ?? 'front'})
        </Link>
      ) : null,
    ],
    ['NetBox status', <Badge value={d.lifecycle_state} />],
    [
      'Power',
      <>
        {d.power_state} <Time iso={d.power_state_at} />
      </>,
    ],
    ['BMC', d.bmc_url],
    ['NVOS', d.nvos_url],
    [
      'Source',
      d.provenance.source === 'netbox' ? (
        <>
          NetBox{d.provenance.stale && <strong> (stale)</strong>}
          {d.provenance.netbox_url && (
            <>
              {' '}
              · <a href={d.provenance.netbox_url}>open in NetBox</a>
            </>
          )}
          , synced <Time iso={d.provenance.last_synced_at} compact />
        </>
      ) : (
        'registered by API'
      ),
    ],
    ['Updated', <Time iso={d.updated_at} />],
  ];
  return (
    <section aria-labelledby="identity" className="card">
      <h2 id="identity">Identity</h2>
      <Facts rows={rows} />
    </section>
  );
}

function Network({ device: d }: { device: Device }) {
  const addressOf = new Map(d.addresses.map((a) => [a.id, a]));
  const loose = d.addresses.filter((a) => !a.interface_id);
  return (
    <section aria-labelledby="network" className="card">
      <h2 id="network">Interfaces and addresses</h2>
      {d.interfaces.length === 0 && loose.length === 0 && <p className="muted">NetBox lists none.</p>}
      {d.interfaces.length > 0 && (
        <table>
          <caption className="visually-hidden">Interfaces</caption>
          <thead>
            <tr>
              <th scope="col">Interface</th>
              <th scope="col">MAC</th>
              <th scope="col">Addresses</th>
            </tr>
          </thead>
          <tbody>
            {d.interfaces.map((i) => (
              <tr key={i.id}>
                <td>
                  {i.name} {i.mgmt_only && <span className="badge tone-unknown">mgmt</span>}
                  {!i.enabled && <span className="badge tone-off">disabled</span>}
                </td>
                <td>
                  <code>{i.mac_address ?? '—'}</code>
                </td>
                <td>{i.addresses.map((a) => addressOf.get(a)?.address ?? a).join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {loose.length > 0 && <p>Other addresses: {loose.map((a) => a.address).join(', ')}</p>}
    </section>
  );
}

function Firmware({ device: d }: { device: Device }) {
  const compliance = useRackCompliance(d.rack_id ?? '', !!d.rack_id);
  const desired = compliance.data?.items.find((c) => c.device_id === d.id);
  const observed = new Map(d.firmware.map((f) => [f.component_id, f]));
  const ids = [...new Set([...(desired?.components.map((c) => c.id) ?? []), ...observed.keys()])];
  return (
    <section aria-labelledby="firmware" className="card">
      <h2 id="firmware">Firmware {desired && <Badge value={desired.status} />}</h2>
      {d.firmware_version && <p>Reported version: {d.firmware_version}</p>}
      {ids.length === 0 ? (
        <p className="muted">No component version known yet (a firmware refresh reads them).</p>
      ) : (
        <table>
          <caption className="visually-hidden">Firmware components against the desired manifest</caption>
          <thead>
            <tr>
              <th scope="col">Component</th>
              <th scope="col">Installed</th>
              <th scope="col">Desired</th>
              <th scope="col">Observed</th>
            </tr>
          </thead>
          <tbody>
            {ids.map((id) => {
              const want = desired?.components.find((c) => c.id === id);
              const seen = observed.get(id);
              return (
                <tr key={id}>
                  <td>{id}</td>
                  <td>{seen?.version ?? want?.installed ?? '—'}</td>
                  <td>
                    {want ? (
                      <>
                        {want.desired} <Badge value={want.compliant ? 'compliant' : 'outdated'} />
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>
                    <Time iso={seen?.observed_at} compact />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

const powerActions = [
  ['on', 'Power on'],
  ['off', 'Power off'],
  ['power-cycle', 'Power cycle'],
  ['graceful-restart', 'Graceful restart'],
] as const;

function DeviceActions({ device: d }: { device: Device }) {
  const operator = useCan('operator');
  const admin = useCan('admin');
  const navigate = useNavigate();
  if (!operator) return null;
  const toJob = (job: Job) => void navigate({ to: '/jobs/$jobId', params: { jobId: job.id } });
  // A two-person rule may hold the request: the sender is told, and another person approves it.
  const toJobOrHeld = (answer: Job | Approval) => (isApproval(answer) ? window.alert(heldText(answer)) : toJob(answer));
  const path = { params: { path: { id: d.id } }, headers: { 'Idempotency-Key': idempotencyKey() } };
  const switchTray = !!d.nvos_url;
  return (
    <div className="actions" role="group" aria-label="Device actions">
      {powerActions.map(([action, label]) => (
        <ConfirmAction
          key={action}
          label={label}
          title={`${label} ${d.name}?`}
          danger={action !== 'on'}
          run={() => unwrap(api().POST('/v1/devices/{id}/power', { ...path, body: { action } }))}
          onDone={toJob}
        >
          <p>
            {label} <strong>{d.name}</strong> ({d.role ?? d.node_type ?? 'device'}, site {d.site_id}).
          </p>
        </ConfirmAction>
      ))}
      <ConfirmAction
        label="Reset BMC"
        title={`Reset the BMC of ${d.name}?`}
        danger
        run={() => unwrap(api().POST('/v1/devices/{id}/bmc-reset', { ...path, body: {} }))}
        onDone={toJob}
      >
        <p>
          The BMC of <strong>{d.name}</strong> reboots (Manager.Reset); the host keeps running.
        </p>
      </ConfirmAction>
      <ConfirmAction
        label="Refresh power state"
        title={`Read the power state of ${d.name} now?`}
        run={() => unwrap(api().POST('/v1/devices/{id}/power-refresh', path))}
        onDone={toJob}
      />
      <ConfirmAction
        label="Refresh firmware versions"
        title={`Read the firmware versions of ${d.name} now?`}
        run={() => unwrap(api().POST('/v1/devices/{id}/firmware-refresh', path))}
        onDone={toJob}
      />
      {switchTray && <NvosInstall device={d} onDone={toJob} />}
      {switchTray && admin && (
        <ConfirmAction
          label="NVOS factory reset"
          title={`Factory-reset NVOS on ${d.name}?`}
          typed={d.name}
          danger
          run={() => unwrap(api().POST('/v1/devices/{id}/nvos-factory-reset', { ...path, body: { confirm: d.name } }))}
          onDone={toJobOrHeld}
        >
          <p>
            NVOS on <strong>{d.name}</strong> goes back to factory defaults: its configuration is erased and it comes
            back with the default credentials. This cannot be undone.
          </p>
        </ConfirmAction>
      )}
    </div>
  );
}

function NvosInstall({ device: d, onDone }: { device: Device; onDone: (job: Job) => void }) {
  const packages = usePackages();
  const [packageId, setPackageId] = useState('');
  const selectId = useId();
  const images = packages.data?.items.filter((p) => p.format === 'nvos') ?? [];
  return (
    <ConfirmAction
      label="Install NVOS"
      title={`Install an NVOS image on ${d.name}?`}
      danger
      run={() =>
        unwrap(
          api().POST('/v1/devices/{id}/nvos-install', {
            params: { path: { id: d.id } },
            headers: { 'Idempotency-Key': idempotencyKey() },
            body: { package_id: packageId },
          }),
        )
      }
      onDone={onDone}
    >
      <p>
        <label htmlFor={selectId}>Image</label>{' '}
        <select id={selectId} value={packageId} onChange={(e) => setPackageId(e.target.value)}>
          <option value="">Choose an NVOS image</option>
          {images.map((p) => (
            <option key={p.id} value={p.id}>
              {p.file_name}
              {'build_id' in p && ` (${p.build_id})`}
            </option>
          ))}
        </select>
      </p>
      <p>
        <strong>{d.name}</strong> reboots into the new image.
      </p>
    </ConfirmAction>
  );
}
