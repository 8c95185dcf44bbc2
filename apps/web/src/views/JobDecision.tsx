import { useState } from 'react';
import { Link } from '@tanstack/react-router';
import { unwrap, type Job } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { isTerminal } from '../api/queries';
import { useCan } from '../api/role';
import { ReasonAction } from '../components/ReasonAction';
import { Time } from '../components/Time';

type Decision = NonNullable<NonNullable<Job['progress']>['decision']>;
type Action = 'retry' | 'skip' | 'reject';

const actions: { action: Action; label: string; admin: boolean; danger: boolean; what: string }[] = [
  { action: 'retry', label: 'Retry', admin: false, danger: false, what: 'The stage runs again for' },
  { action: 'reject', label: 'Reject', admin: false, danger: true, what: 'These move to failed (the rest goes on):' },
  {
    action: 'skip',
    label: 'Skip',
    admin: true,
    danger: true,
    what: 'The stage counts as passed, with your name and the reason in their history, for',
  },
];

/**
 * A stage that failed for some devices and waits (job.progress.decision). Keyed by the decision, so a new one (the
 * job's events refetch it) starts with no selection and no sent notice.
 */
export function DecisionPanel({ job, names }: { job: Job; names: ReadonlyMap<string, string> }) {
  const decision = job.progress?.decision;
  if (!decision || isTerminal(job.state)) return null;
  return <Waiting key={`${decision.stage}@${decision.since}`} job={job} decision={decision} names={names} />;
}

function Waiting({ job, decision, names }: { job: Job; decision: Decision; names: ReadonlyMap<string, string> }) {
  const operator = useCan('operator');
  const admin = useCan('admin');
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [sent, setSent] = useState<string>();
  const waiting = Object.entries(decision.devices).sort(([a], [b]) => nameOf(a, names).localeCompare(nameOf(b, names)));
  // Devices decided meanwhile drop out of the selection: the hub refuses ids that no longer wait.
  const selected = waiting.map(([id]) => id).filter((id) => picked.has(id));
  const pick = (id: string, on: boolean) =>
    setPicked((p) => {
      const next = new Set(p);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  return (
    <section aria-labelledby="decision" className="card">
      <h2 id="decision">Waiting for a decision</h2>
      <p className="warn-box" role="status">
        Stage <strong>{decision.stage}</strong> failed for {plural(waiting.length)}, waiting since{' '}
        <Time iso={decision.since} compact />. The job goes on once each is retried, rejected or skipped.
      </p>
      <table>
        <caption className="visually-hidden">Devices waiting for a decision</caption>
        <thead>
          <tr>
            {operator && <th scope="col">Select</th>}
            <th scope="col">Device</th>
            <th scope="col">Why it failed</th>
          </tr>
        </thead>
        <tbody>
          {waiting.map(([id, why]) => (
            <tr key={id}>
              {operator && (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${nameOf(id, names)}`}
                    checked={picked.has(id)}
                    onChange={(e) => pick(id, e.target.checked)}
                  />
                </td>
              )}
              <td>
                <Link to="/devices/$deviceId" params={{ deviceId: id }}>
                  {nameOf(id, names)}
                </Link>
              </td>
              <td>{why}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {sent && (
        <p role="status" className="muted">
          {sent}
        </p>
      )}
      {operator && (
        <div className="actions" role="group" aria-label="Decision actions">
          <span className="muted">
            {selected.length ? `For the ${plural(selected.length)} selected:` : `For all ${plural(waiting.length)}:`}
          </span>
          {actions
            .filter((a) => admin || !a.admin)
            .map((a) => (
              <DecisionAction
                key={a.action}
                {...a}
                job={job}
                stage={decision.stage}
                devices={selected.length ? selected : waiting.map(([id]) => id)}
                narrowed={selected.length > 0}
                names={names}
                onSent={setSent}
              />
            ))}
        </div>
      )}
    </section>
  );
}

interface ActionProps {
  action: Action;
  label: string;
  danger: boolean;
  what: string;
  job: Job;
  stage: string;
  devices: string[];
  /** Only the selected devices: the others keep waiting. */
  narrowed: boolean;
  names: ReadonlyMap<string, string>;
  onSent: (notice: string) => void;
}

function DecisionAction({ action, label, danger, what, job, stage, devices, narrowed, names, onSent }: ActionProps) {
  const whom =
    devices.length === 1 ? listed(devices, names) : `${devices.length} ${narrowed ? 'selected' : 'waiting'} devices`;
  return (
    <ReasonAction
      label={label}
      title={`${label} stage ${stage} for ${whom}?`}
      danger={danger}
      keptIn="the job and the devices' history"
      run={(reason) =>
        unwrap(
          api().POST('/v1/jobs/{id}/decision', {
            params: { path: { id: job.id } },
            headers: { 'Idempotency-Key': idempotencyKey() },
            body: { action, reason, ...(narrowed ? { device_ids: devices } : {}) },
          }),
        )
      }
      onDone={() =>
        onSent(`${label} sent for ${plural(devices.length)}: the workflow agent delivers it to the workflow.`)
      }
    >
      <p>
        {what} {listed(devices, names)}.
      </p>
    </ReasonAction>
  );
}

const nameOf = (id: string, names: ReadonlyMap<string, string>) => names.get(id) ?? id.slice(0, 8);
/** The devices a decision names, the first 20 by name (a whole rack may wait). */
function listed(ids: string[], names: ReadonlyMap<string, string>): string {
  const shown = ids
    .slice(0, 20)
    .map((id) => nameOf(id, names))
    .join(', ');
  return ids.length > 20 ? `${shown} and ${ids.length - 20} more` : shown;
}
const plural = (n: number) => `${n} device${n === 1 ? '' : 's'}`;
