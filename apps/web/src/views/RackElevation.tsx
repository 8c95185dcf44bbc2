import { useId } from 'react';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { heldText, isApproval, unwrap, type Approval, type Job, type RackDetail } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { useIssues, useRackActivity, useRack, useRackCompliance } from '../api/queries';
import { useCan } from '../api/role';
import { ConfirmAction } from '../components/ConfirmAction';
import { ErrorView, Loading, toneOf } from '../components/Status';
import { axes, type Axis } from '../routes';
import { provenanceText } from './Sites';

const route = getRouteApi('/racks/$rackId');
type Slot = RackDetail['elevation'][number];

const axisLabels: Record<Axis, string> = {
  power: 'Power state',
  jobs: 'Job activity',
  issues: 'Inventory issues',
  compliance: 'Firmware compliance',
};

/** Each slot's value on the chosen axis (text, and its colour through toneOf). */
function useAxisValues(rack: RackDetail | undefined, axis: Axis): (slot: Slot) => string {
  const jobs = useRackActivity(rack, axis === 'jobs');
  const issues = useIssues();
  const compliance = useRackCompliance(rack?.id ?? '', axis === 'compliance' && !!rack);
  if (axis === 'power') return (slot) => slot.power_state;
  if (axis === 'jobs') {
    // A device has one open job at most (jobs_one_active_per_device).
    const byDevice = new Map<string, Job['state']>(
      (jobs.data?.deviceJobs ?? []).map((job) => [job.target.device_id!, job.state]),
    );
    const rackJob = jobs.data?.rackJobs[0]?.state;
    return (slot) => byDevice.get(slot.device_id) ?? (rackJob ? `rack ${rackJob}` : 'idle');
  }
  if (axis === 'issues') {
    const counts = new Map<string, number>();
    for (const i of issues.data?.items ?? [])
      if (i.device_id) counts.set(i.device_id, (counts.get(i.device_id) ?? 0) + 1);
    return (slot) => {
      const n = counts.get(slot.device_id) ?? 0;
      return n ? `${n} issue${n > 1 ? 's' : ''}` : 'no issue';
    };
  }
  const status = new Map(compliance.data?.items.map((c) => [c.device_id, c.status]));
  return (slot) => status.get(slot.device_id) ?? 'unknown';
}

function axisTone(axis: Axis, value: string): string {
  if (axis === 'jobs') return value === 'idle' ? 'off' : value.endsWith('queued') ? 'unknown' : 'busy';
  if (axis === 'issues') return value === 'no issue' ? 'ok' : 'bad';
  return toneOf(value);
}

export function RackElevation() {
  const { rackId } = route.useParams();
  const axis = route.useSearch().axis ?? 'power';
  const navigate = route.useNavigate();
  const rack = useRack(rackId);
  const valueOf = useAxisValues(rack.data, axis);
  const axisId = useId();
  if (rack.isPending) return <Loading what="rack" />;
  if (rack.error) return <ErrorView error={rack.error} title="The rack could not be loaded" />;
  const r = rack.data;
  const placed = r.elevation.filter((s) => s.position !== null);
  const unplaced = r.elevation.filter((s) => s.position === null);
  const legend = new Map<string, string>();
  for (const s of r.elevation) legend.set(valueOf(s), axisTone(axis, valueOf(s)));
  return (
    <>
      <h1>
        Rack {r.name} <span className="muted">({r.site_id})</span>
      </h1>
      <p>
        {r.rack_type ?? 'unknown type'} · {r.u_height} U · {r.elevation.length} devices · {provenanceText(r.provenance)}
        {r.provenance.source === 'netbox' && r.provenance.netbox_url && (
          <>
            {' '}
            · <a href={r.provenance.netbox_url}>open in NetBox</a>
          </>
        )}
      </p>
      <RackActions rack={r} />
      <div className="filters">
        <label htmlFor={axisId}>Colour by</label>
        <select
          id={axisId}
          value={axis}
          onChange={(e) => void navigate({ search: { axis: e.target.value as Axis }, replace: true })}
        >
          {axes.map((a) => (
            <option key={a} value={a}>
              {axisLabels[a]}
            </option>
          ))}
        </select>
      </div>
      <div className="elevation-wrap">
        <ol
          className="elevation"
          aria-label={`Front view of rack ${r.name}, top U${r.u_height} to bottom U1`}
          style={{ gridTemplateRows: `repeat(${r.u_height}, var(--u))` }}
        >
          {Array.from({ length: r.u_height }, (_, i) => (
            <li key={`u${i}`} className="u-label" aria-hidden="true" style={{ gridRow: i + 1 }}>
              {r.u_height - i}
            </li>
          ))}
          {placed.map((slot) => {
            const height = Math.max(1, Math.round(slot.u_height ?? 1));
            const top = r.u_height - (slot.position! + height - 1) + 1;
            const value = valueOf(slot);
            return (
              <li
                key={slot.device_id}
                className={`slot role-${slot.role ?? 'other'} tone-${axisTone(axis, value)}`}
                style={{ gridRow: `${Math.max(1, top)} / span ${height}` }}
              >
                <Link to="/devices/$deviceId" params={{ deviceId: slot.device_id }}>
                  <span className="u">U{slot.position}</span> <span className="name">{slot.name}</span>{' '}
                  <span className="kind">{slot.role ?? slot.node_type ?? ''}</span>{' '}
                  <span className="value">{value}</span>
                </Link>
              </li>
            );
          })}
        </ol>
        <section aria-labelledby="legend" className="legend">
          <h2 id="legend">{axisLabels[axis]}</h2>
          <ul>
            {[...legend].map(([value, tone]) => (
              <li key={value}>
                <span className={`swatch tone-${tone}`} aria-hidden="true" /> {value}
              </li>
            ))}
          </ul>
        </section>
      </div>
      {unplaced.length > 0 && (
        <section aria-labelledby="unplaced">
          <h2 id="unplaced">Devices without a rack position</h2>
          <ul>
            {unplaced.map((s) => (
              <li key={s.device_id}>
                <Link to="/devices/$deviceId" params={{ deviceId: s.device_id }}>
                  {s.name}
                </Link>{' '}
                — {valueOf(s)}
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}

const rackOps = [
  ['on', 'Power on', 'power shelves first, then switch trays, then compute trays'],
  ['off', 'Power off', 'compute trays first, then switch trays, then power shelves'],
  ['cycle', 'Power cycle', 'off in order, then on in order'],
] as const;

function RackActions({ rack }: { rack: RackDetail }) {
  const can = useCan('operator');
  const navigate = useNavigate();
  if (!can) return null;
  const toJob = (job: Job) => void navigate({ to: '/jobs/$jobId', params: { jobId: job.id } });
  // A two-person rule may hold the request: the sender is told, and another person approves it.
  const toJobOrHeld = (answer: Job | Approval) => (isApproval(answer) ? window.alert(heldText(answer)) : toJob(answer));
  const id = rack.id;
  const headers = () => ({ 'Idempotency-Key': idempotencyKey() });
  return (
    <div className="actions" role="group" aria-label="Rack actions">
      {rackOps.map(([op, label, order]) => (
        <ConfirmAction
          key={op}
          label={label}
          title={`${label} rack ${rack.name}?`}
          danger={op !== 'on'}
          run={() =>
            unwrap(api().POST('/v1/racks/{id}/power', { params: { path: { id } }, body: { op }, headers: headers() }))
          }
          onDone={toJobOrHeld}
        >
          <p>
            All {rack.elevation.length} devices of rack <strong>{rack.name}</strong> ({rack.site_id}): {order}.
          </p>
        </ConfirmAction>
      ))}
      <ConfirmAction
        label="Enrol rack"
        title={`Enrol rack ${rack.name}?`}
        run={() => unwrap(api().POST('/v1/racks/{id}/enrol', { params: { path: { id } }, headers: headers() }))}
        onDone={toJob}
      >
        <p>
          All {rack.elevation.length} devices of rack <strong>{rack.name}</strong> ({rack.site_id}) enrol as a unit:
          BMCs, credentials, Redfish inventory and profile, NVLink cabling, firmware baseline, burn-in on the
          site&apos;s SLURM, certified. Each must be discovered or failed; a stage that fails for some devices waits for
          a decision on the job.
        </p>
      </ConfirmAction>
      <ConfirmAction
        label="Cold reboot"
        title={`Cold-reboot rack ${rack.name}?`}
        typed={rack.name}
        danger
        run={() =>
          unwrap(api().POST('/v1/racks/{id}/cold-reboot', { params: { path: { id } }, body: {}, headers: headers() }))
        }
        onDone={toJobOrHeld}
      >
        <p>
          The NVL72 cold-reboot runbook over rack <strong>{rack.name}</strong>: every tray and shelf loses power.
          Running workloads on it stop.
        </p>
      </ConfirmAction>
    </div>
  );
}
