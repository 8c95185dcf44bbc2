import { useId, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { unwrap, type components, type paths } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { useRmaCase } from '../api/queries';
import { useCan } from '../api/role';
import { Facts, type FactRows } from '../components/Facts';
import { ReasonAction } from '../components/ReasonAction';
import { Badge, ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';
import type { RmaCase } from './Rma';

type RmaChange = components['schemas']['RmaCaseChange'];
type RmaPatch = NonNullable<paths['/v1/rma/{id}']['patch']['requestBody']>['content']['application/json'];

const route = getRouteApi('/rma/$caseId');

/** What each move an operator may make does (docs/day2.md, "RMA"). */
const moves: Partial<Record<RmaCase['state'], { label: string; what: string }>> = {
  shipped: {
    label: 'Mark shipped',
    what: 'The device.rma_ship job moves the device to rma (it must be quarantined, failed or remediating).',
  },
  replaced: {
    label: 'Mark replaced',
    what:
      'The device.rma_return job moves the device back to discovered: enrol it again, and certifying it closes ' +
      'the case.',
  },
  closed: { label: 'Close case', what: 'Nothing was shipped: misdiagnosed, or fixed on site (the reason says which).' },
};

export function RmaDetail() {
  const { caseId } = route.useParams();
  const rma = useRmaCase(caseId);
  if (rma.isPending) return <Loading what="RMA case" />;
  if (rma.error) return <ErrorView error={rma.error} title="The RMA case could not be loaded" />;
  const c = rma.data;
  return (
    <>
      <h1>
        RMA case {c.failed_part} <Badge value={c.state} />
      </h1>
      <Summary rma={c} />
      <History rma={c} />
      <Serials rma={c} />
    </>
  );
}

function Summary({ rma: c }: { rma: RmaCase }) {
  const rows: FactRows = [
    [
      'Device',
      <Link to="/devices/$deviceId" params={{ deviceId: c.device_id }}>
        device {c.device_id.slice(0, 8)}
      </Link>,
    ],
    ['Site', c.site_id],
    ['Failed part', c.failed_part],
    ['Fault class', c.fault_class],
    ['Reason', c.reason],
    ['Vendor case', c.vendor_case_id],
    [
      'Opened',
      <>
        <Time iso={c.created_at} /> by {c.opened_by}
        {c.job_id && (
          <>
            {' '}
            (
            <Link to="/jobs/$jobId" params={{ jobId: c.job_id }}>
              remediation job {c.job_id.slice(0, 8)}
            </Link>
            )
          </>
        )}
      </>,
    ],
    ['Updated', <Time iso={c.updated_at} />],
    ['Closed', c.closed_at ? <Time iso={c.closed_at} /> : null],
  ];
  return (
    <section aria-labelledby="case" className="card">
      <h2 id="case">Case</h2>
      <Facts rows={rows} />
      <Moves rma={c} />
    </section>
  );
}

function Moves({ rma: c }: { rma: RmaCase }) {
  const operator = useCan('operator');
  const [started, setStarted] = useState<RmaChange['job']>(null);
  if (!operator) return null;
  const patch = (body: RmaPatch) =>
    unwrap(
      api().PATCH('/v1/rma/{id}', {
        params: { path: { id: c.id } },
        headers: { 'Idempotency-Key': idempotencyKey() },
        body,
      }),
    );
  return (
    <>
      <div className="actions" role="group" aria-label="RMA actions">
        {c.operator_moves.length === 0 && <span className="muted">No move is an operator&apos;s now.</span>}
        {c.operator_moves.map((to) => (
          <ReasonAction
            key={to}
            label={moves[to]?.label ?? `Move to ${to}`}
            title={`Move RMA case ${c.failed_part} from ${c.state} to ${to}?`}
            danger={to === 'shipped'}
            keptIn="the case's history and its job"
            run={(reason) => patch({ state: to, reason })}
            onDone={(changed) => setStarted(changed.job)}
          >
            {moves[to] && <p>{moves[to].what}</p>}
          </ReasonAction>
        ))}
      </div>
      {started && (
        <p role="status">
          Started{' '}
          <Link to="/jobs/$jobId" params={{ jobId: started.id }}>
            {started.kind} {started.id.slice(0, 8)}
          </Link>
          .
        </p>
      )}
      <VendorCase rma={c} />
    </>
  );
}

function VendorCase({ rma: c }: { rma: RmaCase }) {
  const [value, setValue] = useState(c.vendor_case_id ?? '');
  const queryClient = useQueryClient();
  const id = useId();
  const save = useMutation({
    mutationFn: () =>
      unwrap(
        api().PATCH('/v1/rma/{id}', {
          params: { path: { id: c.id } },
          headers: { 'Idempotency-Key': idempotencyKey() },
          body: { vendor_case_id: value.trim() || null },
        }),
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['rma'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form className="filters" aria-label="Vendor case" onSubmit={submit}>
      <label htmlFor={id}>Vendor case id</label>
      <input id={id} maxLength={200} value={value} onChange={(e) => setValue(e.target.value)} />
      <button type="submit" disabled={save.isPending || value.trim() === (c.vendor_case_id ?? '')}>
        Save vendor case
      </button>
      <ErrorView error={save.error} title="The vendor case id was refused" />
    </form>
  );
}

function History({ rma: c }: { rma: RmaCase }) {
  return (
    <section aria-labelledby="history" className="card">
      <h2 id="history">History</h2>
      <table>
        <caption className="visually-hidden">Moves of the case, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Move</th>
            <th scope="col">By</th>
            <th scope="col">Reason</th>
            <th scope="col">Job</th>
          </tr>
        </thead>
        <tbody>
          {c.history.map((h, i) => (
            <tr key={i}>
              <td>
                <Time iso={h.at} />
              </td>
              <td>
                {h.from ? <Badge value={h.from} /> : 'new'} → <Badge value={h.to} />
              </td>
              <td>{h.by}</td>
              <td>{h.reason}</td>
              <td>
                {h.job_id ? (
                  <Link to="/jobs/$jobId" params={{ jobId: h.job_id }}>
                    job {h.job_id.slice(0, 8)}
                  </Link>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The swap once the case closed after a return, and the serials read before and after. */
function Serials({ rma: c }: { rma: RmaCase }) {
  const parts = [...new Set([...Object.keys(c.old_serials), ...Object.keys(c.new_serials ?? {})])].sort();
  return (
    <section aria-labelledby="swap" className="card">
      <h2 id="swap">Swap</h2>
      {c.swap === null ? (
        <p className="muted">Known once the case closes after the device&apos;s return and revalidation.</p>
      ) : c.swap.length === 0 ? (
        <p>No part&apos;s serial changed (or nothing was read before the case opened).</p>
      ) : (
        <table>
          <caption>Parts swapped</caption>
          <thead>
            <tr>
              <th scope="col">Part</th>
              <th scope="col">Old serial</th>
              <th scope="col">New serial</th>
            </tr>
          </thead>
          <tbody>
            {c.swap.map((s) => (
              <tr key={s.part}>
                <td>{s.part}</td>
                <td>
                  <code>{s.old ?? '—'}</code>
                </td>
                <td>
                  <code>{s.new ?? '—'}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {parts.length > 0 && (
        <details>
          <summary>Serials read when the case opened{c.new_serials && ' and after the return'}</summary>
          <table>
            <caption className="visually-hidden">Serials by part</caption>
            <thead>
              <tr>
                <th scope="col">Part</th>
                <th scope="col">When opened</th>
                <th scope="col">After the return</th>
              </tr>
            </thead>
            <tbody>
              {parts.map((p) => (
                <tr key={p}>
                  <td>{p}</td>
                  <td>
                    <code>{c.old_serials[p] ?? '—'}</code>
                  </td>
                  <td>
                    <code>{c.new_serials?.[p] ?? '—'}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </section>
  );
}
