import { getRouteApi, Link } from '@tanstack/react-router';
import { unwrap, type Campaign, type CampaignDevice } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { isTerminal, useCampaign, useCampaignDevices } from '../api/queries';
import { useCan } from '../api/role';
import { ConfirmAction } from '../components/ConfirmAction';
import { CountTable } from '../components/Counts';
import { Badge, ErrorView, Loading } from '../components/Status';
import { duration, Time } from '../components/Time';
import { temporalLink } from './JobDetail';

const route = getRouteApi('/campaigns/$campaignId');
const signals = [
  ['approve', 'Approve', 'Start the waves after the canary.'],
  ['pause', 'Pause', 'No new device update starts; running ones finish.'],
  ['resume', 'Resume', 'Device updates start again.'],
] as const;

export function CampaignDetail() {
  const { campaignId } = route.useParams();
  const campaign = useCampaign(campaignId);
  if (campaign.isPending) return <Loading what="campaign" />;
  if (campaign.error) return <ErrorView error={campaign.error} title="The campaign could not be loaded" />;
  const c = campaign.data;
  return (
    <>
      <h1>
        Campaign {c.name} <Badge value={c.job.state} />
      </h1>
      <Summary campaign={c} />
      <Devices campaign={c} />
    </>
  );
}

function Summary({ campaign: c }: { campaign: Campaign }) {
  const can = useCan('operator');
  const failures = c.failures?.length ?? 0;
  const done = isTerminal(c.job.state);
  return (
    <section aria-labelledby="summary" className="card">
      <h2 id="summary">Progress</h2>
      <p>
        Site {c.site_id} · {c.plan.devices} devices in {c.plan.waves.length} waves · estimated{' '}
        {duration(c.plan.estimated_duration_s)} · created <Time iso={c.created_at} /> by {c.created_by}
      </p>
      <p>
        Stage: <strong>{c.job.progress?.stage ?? c.job.state}</strong>
        {c.job.progress?.message && ` — ${c.job.progress.message}`} ·{' '}
        <Link to="/jobs/$jobId" params={{ jobId: c.job.id }}>
          campaign job
        </Link>{' '}
        ·{' '}
        <a href={temporalLink(c.job)} target="_blank" rel="noreferrer">
          workflow in the Temporal UI
        </a>
      </p>
      <p>
        <label htmlFor="budget">
          Failure budget: {failures} of {c.policy.failureBudget} used
        </label>{' '}
        <meter
          id="budget"
          min={0}
          max={Math.max(c.policy.failureBudget, 1)}
          low={Math.max(c.policy.failureBudget, 1) / 2}
          high={Math.max(c.policy.failureBudget, 1) - 0.5}
          optimum={0}
          value={failures}
        />
      </p>
      <p className="muted">
        Caps: canary {c.policy.canarySize}, {c.policy.waveSize} per wave, {c.policy.maxConcurrentPerRack} per rack,{' '}
        {c.policy.maxConcurrentPerPowerDomain} per power domain, {c.policy.maxConcurrentPerSite} per site
        {c.policy.autoApprove && ', approves itself after the canary'}.
      </p>
      {!done && c.job.progress?.stage === 'awaiting_approval' && (
        <p className="warn-box" role="status">
          The canary is done and the campaign waits for approval: check the canary devices below, then approve to start
          the waves.
        </p>
      )}
      {c.job.error && (
        <div className="error" role="alert">
          <code>{c.job.error.code}</code> {c.job.error.message}
        </div>
      )}
      {can && !done && (
        <div className="actions" role="group" aria-label="Campaign actions">
          {signals.map(([signal, label, what]) => (
            <ConfirmAction
              key={signal}
              label={label}
              title={`${label} campaign ${c.name}?`}
              run={() =>
                unwrap(
                  api().POST(`/v1/firmware-campaigns/{id}/${signal}`, {
                    params: { path: { id: c.id } },
                    headers: { 'Idempotency-Key': idempotencyKey() },
                  }),
                )
              }
            >
              <p>{what}</p>
            </ConfirmAction>
          ))}
          <ConfirmAction
            label="Cancel campaign"
            title={`Cancel campaign ${c.name}?`}
            danger
            run={() =>
              unwrap(
                api().POST('/v1/firmware-campaigns/{id}/cancel', {
                  params: { path: { id: c.id } },
                  headers: { 'Idempotency-Key': idempotencyKey() },
                }),
              )
            }
          >
            <p>Running device updates are cancelled; the rest never start.</p>
          </ConfirmAction>
        </div>
      )}
    </section>
  );
}

function Devices({ campaign: c }: { campaign: Campaign }) {
  const devices = useCampaignDevices(c.id, c.job.state);
  return (
    <section aria-labelledby="devices" className="card">
      <h2 id="devices">Devices</h2>
      {devices.isPending && <Loading what="campaign devices" />}
      <ErrorView error={devices.error} />
      {devices.data && (
        <>
          <CountTable caption="By state" items={devices.data.items} by={(d) => d.state} badge />
          <table>
            <caption className="visually-hidden">Per-device results</caption>
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">State</th>
                <th scope="col">Result</th>
                <th scope="col">Components</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {devices.data.items.map((d) => (
                <tr key={d.job_id}>
                  <td>
                    {d.device_id ? (
                      <Link to="/devices/$deviceId" params={{ deviceId: d.device_id }}>
                        {d.name}
                      </Link>
                    ) : (
                      d.name
                    )}
                  </td>
                  <td>
                    <Link to="/jobs/$jobId" params={{ jobId: d.job_id }}>
                      <Badge value={d.state} />
                    </Link>
                  </td>
                  <td>{d.status ? <Badge value={d.status} /> : '—'}</td>
                  <td>
                    <Components items={d.components} />
                  </td>
                  <td>{d.error ? <code>{d.error.code}</code> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

/**
 * A device's components, from → to with their outcome. A tray has a dozen or more: past three they fold into a
 * summary by status, open when one failed so its error code shows without a click.
 */
function Components({ items }: { items: CampaignDevice['components'] }) {
  const list = items.map((x) => (
    <div key={x.id}>
      {x.id}: {x.from ?? '?'} → {x.to} <Badge value={x.status} />
      {x.code && <code className="err-code"> {x.code}</code>}
    </div>
  ));
  if (items.length <= 3) return <>{list}</>;
  const counts = new Map<string, number>();
  for (const x of items) counts.set(x.status, (counts.get(x.status) ?? 0) + 1);
  return (
    <details open={items.some((x) => x.status === 'failed')}>
      <summary>
        {items.length} components: {[...counts].map(([status, n]) => `${n} ${status}`).join(', ')}
      </summary>
      {list}
    </details>
  );
}
