import { useId, useState } from 'react';
import { Link, useNavigate } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import {
  heldText,
  isApproval,
  unwrap,
  type Approval,
  type components,
  type DeviceDetail as Device,
  type Job,
} from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { useDeviceHealth } from '../api/queries';
import { useCan } from '../api/role';
import { Facts, type FactRows } from '../components/Facts';
import { ReasonAction } from '../components/ReasonAction';
import { Badge, ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';

type Health = components['schemas']['DeviceHealth'];
type FaultClass = Health['faults'][number]['class'];
type LifecycleState = Device['lifecycle']['state'];

const faultClasses: FaultClass[] = ['unreachable', 'credentials', 'gpu', 'psu', 'leak', 'thermal', 'chassis'];
/** Only remediation acts on a device in these states (docs/day2.md, "Held devices"). */
const held: readonly LifecycleState[] = ['quarantined', 'remediating', 'rma'];

/**
 * The device's last health reading, whether it is held and why, and the operator's quarantine, remediation and
 * release (each a job, with a reason the hub requires).
 */
export function HealthAndHolds({ device: d }: { device: Device }) {
  const health = useDeviceHealth(d.id);
  return (
    <section aria-labelledby="health" className="card">
      <h2 id="health">Health and quarantine</h2>
      <Hold device={d} />
      <HoldActions device={d} />
      {health.isPending && <Loading what="health reading" />}
      <ErrorView error={health.error} title="The health reading could not be loaded" />
      {health.data === null && (
        <p className="muted">Not observed yet: the site&apos;s observer has delivered no reading of this device.</p>
      )}
      {health.data && <Reading health={health.data} />}
      <p>
        <Link to="/rma" search={{ device: d.id }}>
          RMA cases of this device
        </Link>{' '}
        ·{' '}
        <Link to="/sla" search={{ object: d.id }}>
          SLA breaches of this device
        </Link>
      </p>
    </section>
  );
}

/** Held or not; a held device says since when and why (its last lifecycle move). */
function Hold({ device: d }: { device: Device }) {
  const state = d.lifecycle.state;
  const isHeld = held.includes(state);
  const lastMove = useQuery({
    queryKey: ['device', d.id, 'history', 'lifecycle', d.lifecycle.since],
    queryFn: () =>
      unwrap(
        api().GET('/v1/devices/{id}/history', {
          params: { path: { id: d.id }, query: { axis: ['lifecycle'], limit: 1 } },
        }),
      ),
    enabled: isHeld,
  });
  if (!isHeld)
    return (
      <p>
        Not held: lifecycle <Badge value={state} />. Campaigns, power batches and rack sequences act on it.
      </p>
    );
  const move = lastMove.data?.items.find((m) => m.to === state);
  return (
    <p className="warn-box" role="status">
      <strong>Held: {state}</strong> since <Time iso={d.lifecycle.since} />
      {move && (
        <>
          {' '}
          — {move.reason}
          {move.message && `: ${move.message}`}
        </>
      )}
      . Only remediation acts on it; other requests leave it out or are refused.
    </p>
  );
}

function Reading({ health: h }: { health: Health }) {
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const rows: FactRows = [
    [
      'Health',
      <>
        <Badge value={h.faults.length ? 'faulty' : 'healthy'} />
        {h.faults.length > 0 && ` ${plural(h.faults.length, 'fault')}`}
      </>,
    ],
    ['BMC reachable', h.reachable ? 'yes' : 'no'],
    ['Credentials', h.credentials_ok === null ? null : h.credentials_ok ? 'accepted' : 'refused'],
    ['Power (observed)', h.power_state],
    ['Last reading', <Time iso={h.observed_at} />],
    [
      'Unchanged since',
      <>
        <Time iso={h.changed_at} compact /> ({plural(h.observations, 'reading')} in a row)
      </>,
    ],
  ];
  return (
    <>
      <Facts rows={rows} />
      {h.faults.length > 0 && (
        <table>
          <caption>Faults</caption>
          <thead>
            <tr>
              <th scope="col">Class</th>
              <th scope="col">Component</th>
              <th scope="col">Severity</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {h.faults.map((f) => (
              <tr key={`${f.class}-${f.component}`}>
                <td>{f.class}</td>
                <td>{f.component}</td>
                <td>
                  <Badge value={f.severity} />
                </td>
                <td>{f.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function HoldActions({ device: d }: { device: Device }) {
  const operator = useCan('operator');
  const navigate = useNavigate();
  const [faultClass, setFaultClass] = useState<FaultClass | ''>('');
  const selectId = useId();
  const state = d.lifecycle.state;
  if (!operator || state === 'decommissioned') return null;
  const toJob = (job: Job) => void navigate({ to: '/jobs/$jobId', params: { jobId: job.id } });
  const request = () => ({ params: { path: { id: d.id } }, headers: { 'Idempotency-Key': idempotencyKey() } });
  const keptIn = "the audit log and the device's history";
  return (
    <div className="actions" role="group" aria-label="Quarantine actions">
      {!held.includes(state) && (
        <ReasonAction
          label="Quarantine"
          title={`Quarantine ${d.name}?`}
          danger
          keptIn={keptIn}
          run={(reason) =>
            unwrap(api().POST('/v1/devices/{id}/quarantine', { ...request(), body: { reason, remediate: false } }))
          }
          onDone={toJob}
        >
          <p>
            <strong>{d.name}</strong> ({state}) is held: campaigns and power batches leave it out, rack sequences and
            device jobs are refused, until it is released.
          </p>
        </ReasonAction>
      )}
      {state !== 'rma' && state !== 'remediating' && (
        <ReasonAction
          label="Remediate"
          title={`Remediate ${d.name}?`}
          danger
          keptIn={keptIn}
          run={(reason) =>
            unwrap(
              api().POST('/v1/devices/{id}/remediate', {
                ...request(),
                body: { reason, ...(faultClass ? { fault_class: faultClass } : {}) },
              }),
            )
          }
          onDone={toJob}
        >
          <p>
            <strong>{d.name}</strong> is held (if it is not yet) and its fault&apos;s playbook runs step by step, each
            verified by fresh health readings; the first step that clears the fault returns it where it was. A playbook
            that runs out leaves it quarantined and opens an RMA case.
          </p>
          <p>
            <label htmlFor={selectId}>Fault</label>{' '}
            <select id={selectId} value={faultClass} onChange={(e) => setFaultClass(e.target.value as FaultClass | '')}>
              <option value="">The last observed fault</option>
              {faultClasses.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </p>
        </ReasonAction>
      )}
      {state === 'quarantined' && (
        <ReasonAction
          label="Release"
          title={`Release ${d.name}?`}
          keptIn={keptIn}
          run={(reason) => unwrap(api().POST('/v1/devices/{id}/release', { ...request(), body: { reason } }))}
          // A release may need a second person (docs/security.md): then the answer is the approval, not a job.
          onDone={(answer: Job | Approval) => (isApproval(answer) ? window.alert(heldText(answer)) : toJob(answer))}
        >
          <p>
            <strong>{d.name}</strong> is read once more: healthy, it goes back where it was before the quarantine; with
            a fault, it stays held and the job fails naming the faults.
          </p>
        </ReasonAction>
      )}
      {state !== 'rma' && <OpenRma device={d} />}
    </div>
  );
}

/** An operator opens a case by hand (a remediation that runs out of steps opens its own). */
function OpenRma({ device: d }: { device: Device }) {
  const navigate = useNavigate();
  const [part, setPart] = useState('');
  const [vendorCase, setVendorCase] = useState('');
  const partId = useId();
  const vendorId = useId();
  return (
    <ReasonAction
      label="Open RMA case"
      title={`Open an RMA case for ${d.name}?`}
      keptIn="the case"
      ready={part.trim() !== ''}
      run={(reason) =>
        unwrap(
          api().POST('/v1/rma', {
            headers: { 'Idempotency-Key': idempotencyKey() },
            body: {
              device_id: d.id,
              failed_part: part.trim(),
              reason,
              ...(vendorCase.trim() ? { vendor_case_id: vendorCase.trim() } : {}),
            },
          }),
        )
      }
      onDone={(opened) => void navigate({ to: '/rma/$caseId', params: { caseId: opened.id } })}
    >
      <p>
        The case records the serials of the device&apos;s last hardware read; ship it from the case&apos;s page once the
        device is quarantined.
      </p>
      <p>
        <label htmlFor={partId}>Failed part (required: GPU_2, PSU_3, tray)</label>
        <input id={partId} required maxLength={200} value={part} onChange={(e) => setPart(e.target.value)} />
      </p>
      <p>
        <label htmlFor={vendorId}>Vendor case id (optional)</label>
        <input id={vendorId} maxLength={200} value={vendorCase} onChange={(e) => setVendorCase(e.target.value)} />
      </p>
    </ReasonAction>
  );
}
