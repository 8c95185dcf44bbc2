import { Link, useNavigate } from '@tanstack/react-router';
import { unwrap, type components, type DeviceDetail as Device, type Job } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { useDeviceHardware, useHardware } from '../api/queries';
import { useCan } from '../api/role';
import { ConfirmAction } from '../components/ConfirmAction';
import { Facts, type FactRows } from '../components/Facts';
import { Badge, ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';

type DeviceHardware = components['schemas']['DeviceHardware'];
type LifecycleState = Device['lifecycle']['state'];

// The states each job may start from (docs/enrolment.md); the hub refuses the others with a 409 naming the state.
const enrolFrom: readonly LifecycleState[] = ['discovered', 'failed'];
const burnInFrom: readonly LifecycleState[] = ['enrolled', 'certified'];

/** Fleet's lifecycle of the device (not NetBox's status), its conditions, and the hardware an enrolment read. */
export function Lifecycle({ device: d }: { device: Device }) {
  return (
    <section aria-labelledby="lifecycle" className="card">
      <h2 id="lifecycle">Lifecycle and hardware</h2>
      <p>
        Lifecycle <Badge value={d.lifecycle.state} /> since <Time iso={d.lifecycle.since} />
      </p>
      <LifecycleActions device={d} />
      <Conditions conditions={d.conditions} />
      <Hardware device={d} />
    </section>
  );
}

function LifecycleActions({ device: d }: { device: Device }) {
  const operator = useCan('operator');
  const hardware = useHardware();
  const navigate = useNavigate();
  const state = d.lifecycle.state;
  // The hub burns in compute trays only: it goes by the node type's kind, as here.
  const compute = hardware.data?.items.find((h) => h.node_type === d.node_type)?.kind === 'compute';
  const enrol = enrolFrom.includes(state);
  const burnIn = compute && burnInFrom.includes(state);
  if (!operator || (!enrol && !burnIn)) return null;
  const toJob = (job: Job) => void navigate({ to: '/jobs/$jobId', params: { jobId: job.id } });
  const request = () => ({ params: { path: { id: d.id } }, headers: { 'Idempotency-Key': idempotencyKey() } });
  return (
    <div className="actions" role="group" aria-label="Lifecycle actions">
      {enrol && (
        <ConfirmAction
          label="Enrol"
          title={`Enrol ${d.name}?`}
          run={() => unwrap(api().POST('/v1/devices/{id}/enrol', request()))}
          onDone={toJob}
        >
          <p>
            <strong>{d.name}</strong> ({d.role ?? d.node_type ?? 'device'}, {state}): its BMC, credentials and Redfish
            inventory are checked against its profile and it is brought to its firmware baseline
            {compute
              ? ", then burned in on the site's SLURM and certified."
              : '; it ends enrolled (switch trays and power shelves are burned in with their rack).'}{' '}
            A failed stage waits for a decision on the job.
          </p>
        </ConfirmAction>
      )}
      {burnIn && (
        <ConfirmAction
          label="Burn in"
          title={`Burn in ${d.name}?`}
          run={() => unwrap(api().POST('/v1/devices/{id}/burn-in', request()))}
          onDone={toJob}
        >
          <p>
            The host of <strong>{d.name}</strong> ({state}) is powered on and the site&apos;s SLURM runs a GPU stress, a
            memory test and an NVLink all-reduce on it; it is certified when they pass, and a failed test waits for a
            decision on the job.
          </p>
        </ConfirmAction>
      )}
    </div>
  );
}

function Conditions({ conditions }: { conditions: Device['conditions'] }) {
  if (conditions.length === 0) return <p className="muted">No condition observed yet.</p>;
  return (
    <table>
      <caption>Conditions</caption>
      <thead>
        <tr>
          <th scope="col">Condition</th>
          <th scope="col">Status</th>
          <th scope="col">Reason</th>
          <th scope="col">Message</th>
          <th scope="col">Changed</th>
        </tr>
      </thead>
      <tbody>
        {conditions.map((c) => (
          <tr key={c.type}>
            <td>{c.type}</td>
            <td>
              <Badge value={c.status} />
            </td>
            <td>{c.reason}</td>
            <td>{c.message}</td>
            <td>
              <Time iso={c.last_transition_time} compact />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Hardware({ device: d }: { device: Device }) {
  const hardware = useDeviceHardware(d.id);
  return (
    <>
      <h3>Hardware</h3>
      {hardware.isPending && <Loading what="hardware record" />}
      <ErrorView error={hardware.error} title="The hardware record could not be loaded" />
      {hardware.data === null && (
        <p className="muted">Not read yet: enrol the device (its enrolment reads the Redfish inventory).</p>
      )}
      {hardware.data && <HardwareRecord hw={hardware.data} />}
    </>
  );
}

function HardwareRecord({ hw }: { hw: DeviceHardware }) {
  const h = hw;
  const gib = (n: number | null) => (n === null ? null : `${n} GiB`);
  const rows: FactRows = [
    ['Serial', <Serial hw={hw} />],
    ['Model', [h.manufacturer, h.model].filter(Boolean).join(' ') || null],
    ['Part number', h.part_number],
    ['SKU', h.sku],
    ['GPUs', h.gpu_count],
    ['CPUs', h.cpu_count],
    ['Memory', gib(h.memory_gib)],
    ['GPU memory', gib(h.gpu_memory_gib)],
    ['BIOS', h.bios_version],
    [
      'Read',
      <>
        <Time iso={hw.read_at} />
        {hw.job_id && (
          <>
            {' '}
            by{' '}
            <Link to="/jobs/$jobId" params={{ jobId: hw.job_id }}>
              job {hw.job_id.slice(0, 8)}
            </Link>
          </>
        )}
      </>,
    ],
    ['Redfish document', <code className="hash">{hw.digest}</code>],
  ];
  return (
    <>
      <Facts rows={rows} />
      {h.parts.length > 0 && (
        <table>
          <caption>Parts ({h.parts.length})</caption>
          <thead>
            <tr>
              <th scope="col">Part</th>
              <th scope="col">Kind</th>
              <th scope="col">Model</th>
              <th scope="col">Part number</th>
              <th scope="col">Serial</th>
            </tr>
          </thead>
          <tbody>
            {h.parts.map((p) => (
              <tr key={p.id}>
                <td>{p.id}</td>
                <td>{p.kind}</td>
                <td>{p.model ?? '—'}</td>
                <td>{p.part_number ?? '—'}</td>
                <td>{p.serial_number ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {h.differences.length === 0 ? (
        <p>
          <span className="badge tone-ok">matches its profile</span> The node type&apos;s expected profile found no
          difference.
        </p>
      ) : (
        <table>
          <caption>Differences from the expected profile ({h.differences.length})</caption>
          <thead>
            <tr>
              <th scope="col">Difference</th>
              <th scope="col">Subject</th>
              <th scope="col">Expected</th>
              <th scope="col">Actual</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {h.differences.map((x, i) => (
              <tr key={`${x.code}-${x.subject}-${i}`}>
                <td>
                  <code className="err-code">{x.code}</code>
                </td>
                <td>{x.subject || '—'}</td>
                <td>{x.expected ?? '—'}</td>
                <td>{x.actual ?? '—'}</td>
                <td>{x.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** The serial the BMC reports, and whether it is NetBox's: a mismatch says so in words, not only in colour. */
function Serial({ hw }: { hw: DeviceHardware }) {
  if (!hw.serial_number) return <span className="muted">not reported by the BMC</span>;
  return (
    <>
      <code>{hw.serial_number}</code>{' '}
      {hw.serial_matches_netbox === false ? (
        <strong className="badge tone-bad">does not match NetBox ({hw.netbox_serial ?? '—'})</strong>
      ) : hw.serial_matches_netbox ? (
        <span className="badge tone-ok">matches NetBox</span>
      ) : (
        <span className="muted">(NetBox has no serial to compare)</span>
      )}
    </>
  );
}
