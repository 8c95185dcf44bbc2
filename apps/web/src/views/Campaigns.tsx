import { useId, useState, type FormEvent } from 'react';
import { Link, useNavigate } from '@tanstack/react-router';
import { useMutation } from '@tanstack/react-query';
import { unwrap, type CampaignPlan, type paths } from '@fleet/client';
import { api, idempotencyKey } from '../api/client';
import { useCampaigns, useHardware, useSites } from '../api/queries';
import { useCan } from '../api/role';
import { Badge, ErrorView, Loading } from '../components/Status';
import { duration, Time } from '../components/Time';

type CampaignBody = paths['/v1/firmware-campaigns']['post']['requestBody']['content']['application/json'];
type NodeType = NonNullable<CampaignBody['node_types']>[number];

export function Campaigns() {
  const campaigns = useCampaigns();
  const can = useCan('operator');
  return (
    <>
      <h1>Firmware campaigns</h1>
      {can && <NewCampaign />}
      <section aria-labelledby="list" className="card">
        <h2 id="list">Campaigns</h2>
        {campaigns.isPending && <Loading what="campaigns" />}
        <ErrorView error={campaigns.error} />
        {campaigns.data?.items.length === 0 && <p className="muted">No campaign yet.</p>}
        {!!campaigns.data?.items.length && (
          <table>
            <caption className="visually-hidden">Campaigns, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Site</th>
                <th scope="col">State</th>
                <th scope="col">Devices</th>
                <th scope="col">Failures</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {campaigns.data.items.map((c) => (
                <tr key={c.id}>
                  <td>
                    <Link to="/campaigns/$campaignId" params={{ campaignId: c.id }}>
                      {c.name}
                    </Link>
                  </td>
                  <td>{c.site_id}</td>
                  <td>
                    <Badge value={c.job.state} /> {c.job.progress?.stage}
                  </td>
                  <td className="num">{c.plan.devices}</td>
                  <td className="num">
                    {c.failures?.length ?? 0} / {c.policy.failureBudget}
                  </td>
                  <td>
                    <Time iso={c.created_at} compact /> by {c.created_by}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

interface Draft {
  name: string;
  site_id: string;
  node_types: NodeType[];
  canarySize: number;
  waveSize: number;
  failureBudget: number;
}

function NewCampaign() {
  const sites = useSites();
  const hardware = useHardware();
  const navigate = useNavigate();
  const id = useId();
  const [draft, setDraft] = useState<Draft>({
    name: '',
    site_id: '',
    node_types: [],
    canarySize: 1,
    waveSize: 50,
    failureBudget: 2,
  });
  const body = (dryRun: boolean): CampaignBody => ({
    name: draft.name,
    site_id: draft.site_id || (sites.data?.items[0]?.id ?? ''),
    ...(draft.node_types.length ? { node_types: draft.node_types } : {}),
    policy: { canarySize: draft.canarySize, waveSize: draft.waveSize, failureBudget: draft.failureBudget },
    dry_run: dryRun,
  });
  const preview = useMutation({
    mutationFn: async () => {
      const answer = await unwrap(api().POST('/v1/firmware-campaigns', { body: body(true) }));
      if (!('plan' in answer) || 'id' in answer) throw new Error('the hub did not answer with a plan');
      return answer.plan as CampaignPlan;
    },
  });
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api().POST('/v1/firmware-campaigns', { body: body(false), headers: { 'Idempotency-Key': idempotencyKey() } }),
      ),
    onSuccess: (c) => {
      if ('id' in c) void navigate({ to: '/campaigns/$campaignId', params: { campaignId: c.id } });
    },
  });
  const set = (patch: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    preview.reset();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    preview.mutate();
  };
  const num = (key: 'canarySize' | 'waveSize' | 'failureBudget', label: string, min: number) => (
    <p>
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <input
        id={`${id}-${key}`}
        type="number"
        min={min}
        value={draft[key]}
        onChange={(e) => set({ [key]: Number(e.target.value) })}
      />
    </p>
  );
  return (
    <section aria-labelledby="new" className="card">
      <h2 id="new">New campaign</h2>
      <form onSubmit={submit} className="campaign-form">
        <p>
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} required value={draft.name} onChange={(e) => set({ name: e.target.value })} />
        </p>
        <p>
          <label htmlFor={`${id}-site`}>Site</label>
          <select id={`${id}-site`} value={draft.site_id} onChange={(e) => set({ site_id: e.target.value })}>
            {sites.data?.items.map((s) => (
              <option key={s.id} value={s.id}>
                {s.id}
              </option>
            ))}
          </select>
        </p>
        <fieldset>
          <legend>Node types (none: every type with a default manifest)</legend>
          {hardware.data?.items.map(({ node_type: t }) => (
            <label key={t} className="check">
              <input
                type="checkbox"
                checked={draft.node_types.includes(t)}
                onChange={(e) =>
                  set({
                    node_types: e.target.checked ? [...draft.node_types, t] : draft.node_types.filter((x) => x !== t),
                  })
                }
              />{' '}
              {t}
            </label>
          ))}
        </fieldset>
        {num('canarySize', 'Canary devices', 0)}
        {num('waveSize', 'Devices per wave', 1)}
        {num('failureBudget', 'Failure budget', 0)}
        <div className="buttons">
          <button type="submit" disabled={preview.isPending}>
            {preview.isPending ? 'Planning…' : 'Preview plan (dry run)'}
          </button>
          <button
            type="button"
            className="primary"
            disabled={!preview.isSuccess || create.isPending}
            onClick={() => create.mutate()}
          >
            {create.isPending ? 'Starting…' : 'Start campaign'}
          </button>
        </div>
      </form>
      <ErrorView error={preview.error} title="The plan was refused" />
      <ErrorView error={create.error} title="The campaign was refused" />
      {preview.data && <PlanPreview plan={preview.data} draft={draft} />}
    </section>
  );
}

function PlanPreview({ plan, draft }: { plan: CampaignPlan; draft: Draft }) {
  const names = new Map(plan.devices.map((d) => [d.device_id, d.name]));
  return (
    <section aria-labelledby="plan" className="plan">
      <h3 id="plan">Plan</h3>
      <p>
        {plan.devices.length} devices in {plan.waves.length} waves; estimated {duration(plan.estimated_duration_s)} (at
        least {duration(plan.lower_bound_s)}). Caps: canary {draft.canarySize}, {draft.waveSize} per wave, failure
        budget {draft.failureBudget}.
      </p>
      <table>
        <caption className="visually-hidden">Waves</caption>
        <thead>
          <tr>
            <th scope="col">Wave</th>
            <th scope="col">Kind</th>
            <th scope="col">Devices</th>
          </tr>
        </thead>
        <tbody>
          {plan.waves.map((w) => (
            <tr key={w.index}>
              <td className="num">{w.index}</td>
              <td>{w.kind}</td>
              <td>
                {w.device_ids.length}:{' '}
                {w.device_ids
                  .slice(0, 8)
                  .map((d) => names.get(d) ?? d.slice(0, 8))
                  .join(', ')}
                {w.device_ids.length > 8 && ' …'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {plan.excluded.length > 0 && (
        <details>
          <summary>{plan.excluded.length} devices left out</summary>
          <ul>
            {plan.excluded.map((x) => (
              <li key={x.device_id}>
                {x.name}: {x.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
