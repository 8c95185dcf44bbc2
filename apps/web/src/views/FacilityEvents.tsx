import { getRouteApi, Link } from '@tanstack/react-router';
import { unwrap, type components } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { useFacilityEvents, useRacks, type FacilityEventFilter } from '../api/queries';
import { useCan } from '../api/role';
import { FilterSelect, LoadMore } from '../components/FilterSelect';
import { ReasonAction } from '../components/ReasonAction';
import { Badge, ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';
import type { FacilitySearch } from '../routes';

type FacilityEvent = components['schemas']['FacilityEvent'];

const route = getRouteApi('/facility');
const states: readonly FacilityEvent['state'][] = [
  'recorded',
  'quarantined',
  'awaiting_approval',
  'powering_off',
  'done',
  'failed',
  'rejected',
];
const kinds: readonly FacilityEvent['kind'][] = ['leak', 'power_feed', 'cooling', 'smoke', 'other'];
const severities: readonly FacilityEvent['severity'][] = ['info', 'warning', 'critical'];

function toFilter(s: FacilitySearch): FacilityEventFilter {
  return {
    ...(s.state ? { state: [s.state as FacilityEvent['state']] } : {}),
    ...(s.kind ? { kind: [s.kind as FacilityEvent['kind']] } : {}),
    ...(s.severity ? { severity: [s.severity as FacilityEvent['severity']] } : {}),
  };
}

export function FacilityEvents() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const events = useFacilityEvents(toFilter(search));
  const racks = useRacks();
  const rackNames = new Map(racks.data?.items.map((r) => [r.id, r.name]) ?? []);
  const set = (patch: Partial<FacilitySearch>) => void navigate({ search: (s) => ({ ...s, ...patch }), replace: true });
  const items = events.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <h1>Facility events</h1>
      <p className="muted">
        What the building management system reported around the racks, as graded: recorded, the racks&apos; devices
        held, or the racks powered off in order (after an operator&apos;s approval, or at once for a critical event).
      </p>
      <form className="filters" role="search" aria-label="Filter facility events" onSubmit={(e) => e.preventDefault()}>
        <FilterSelect label="State" value={search.state} options={states} onChange={(state) => set({ state })} />
        <FilterSelect label="Kind" value={search.kind} options={kinds} onChange={(kind) => set({ kind })} />
        <FilterSelect
          label="Severity"
          value={search.severity}
          options={severities}
          onChange={(severity) => set({ severity })}
        />
      </form>
      <ErrorView error={events.error} title="The facility events could not be loaded" />
      {events.isPending ? (
        <Loading what="facility events" />
      ) : items.length === 0 ? (
        <p className="muted">No facility event matches.</p>
      ) : (
        <EventTable
          events={items}
          rackNames={rackNames}
          caption={`Facility events, newest first (${items.length}${events.hasNextPage ? '+' : ''})`}
        />
      )}
      <LoadMore
        more={events.hasNextPage}
        loading={events.isFetchingNextPage}
        load={() => void events.fetchNextPage()}
      />
    </>
  );
}

function EventTable({
  events,
  rackNames,
  caption,
}: {
  events: readonly FacilityEvent[];
  rackNames: ReadonlyMap<string, string>;
  caption: string;
}) {
  const operator = useCan('operator');
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Received</th>
          <th scope="col">Kind</th>
          <th scope="col">Severity</th>
          <th scope="col">State</th>
          <th scope="col">Racks</th>
          <th scope="col">Message</th>
          <th scope="col">Source</th>
          <th scope="col">Response</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={e.id}>
            <td>
              <Time iso={e.received_at} compact />
            </td>
            <td>{e.kind}</td>
            <td>
              <Badge value={e.severity} />
              {e.critical && <strong> critical: act at once</strong>}
            </td>
            <td>
              <Badge value={e.state} />
            </td>
            <td>
              {e.rack_ids.map((id, i) => (
                <span key={id}>
                  {i > 0 && ', '}
                  <Link to="/racks/$rackId" params={{ rackId: id }}>
                    {rackNames.get(id) ?? `rack ${id.slice(0, 8)}`}
                  </Link>
                </span>
              ))}
              {e.location && <div className="muted">{e.location}</div>}
            </td>
            <td>{e.message}</td>
            <td>
              {e.source} <code className="muted">{e.external_id}</code>
            </td>
            <td>
              <Response event={e} operator={operator} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the grading decided and did, and the approval a waiting power-off needs. */
function Response({ event: e, operator }: { event: FacilityEvent; operator: boolean }) {
  const held = e.racks.flatMap((r) => r.quarantine ?? []);
  const refused = e.racks.map((r) => r.power_off?.refused).filter(Boolean);
  const decide = (decision: 'approve' | 'reject', reason: string) =>
    unwrap(
      api().POST(`/v1/facility-events/{id}/${decision}`, {
        params: { path: { id: e.id } },
        headers: { 'Idempotency-Key': idempotencyKey() },
        body: { reason },
      }),
    );
  return (
    <>
      <div>
        {e.grading.response.replace('_', ' ')} <span className="muted">({e.grading.rule})</span>
      </div>
      {held.length > 0 && (
        <div className="muted">
          {held.filter((d) => d.job_id).length} held, {held.filter((d) => d.skipped).length} left out
        </div>
      )}
      {refused.map((why, i) => (
        <div key={i} className="muted">
          power-off waits: {why}
        </div>
      ))}
      {e.decision && (
        <div>
          {e.decision.action === 'approve' ? 'approved' : 'rejected'} by {e.decision.by}: {e.decision.reason}
        </div>
      )}
      {operator && e.state === 'awaiting_approval' && (
        <div className="actions" role="group" aria-label={`Power-off of the ${e.kind} event`}>
          <ReasonAction
            label="Approve power-off"
            title={`Power off ${racksOf(e.rack_ids.length)} of the ${e.kind} event?`}
            danger
            keptIn="the audit log and with the event"
            run={(reason) => decide('approve', reason)}
          >
            <p>Each rack is powered off in order (compute, then switches, then shelves); its devices stay held.</p>
          </ReasonAction>
          <ReasonAction
            label="Reject power-off"
            title={`Leave the racks of the ${e.kind} event on?`}
            keptIn="the audit log and with the event"
            run={(reason) => decide('reject', reason)}
          >
            <p>The racks stay on and their devices held: release them from their pages.</p>
          </ReasonAction>
        </div>
      )}
    </>
  );
}

const racksOf = (n: number) => (n === 1 ? 'the rack' : `${n} racks`);
