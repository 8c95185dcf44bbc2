import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { insertSite, siteSatellitesOf, type DbHandle } from '@fleet/db';
import { siteObserverWorkflowId } from '@fleet/domain';
import { AgentConfig } from '../src/config.js';
import { createAgentMetrics } from '../src/metrics.js';
import { checkObservers } from '../src/observers.js';
import { checkSatellites, removeDrainedSites } from '../src/satellites.js';
import { oneClient, startAgentTestEnv, type AgentTestEnv } from './helpers/temporal-and-db.js';

// The agent's site check against a real Temporal dev server and Postgres; no satellite polls here (the two-sites
// end-to-end test has real ones).

describe('workflow agent: satellite liveness and removed sites', () => {
  let env: AgentTestEnv;
  let handle: DbHandle;
  let client: Client;
  const registry = new Registry();
  const metrics = createAgentMetrics(registry);
  const log = pino({ level: 'silent' });

  before(
    async () => {
      env = await startAgentTestEnv();
      ({ handle, client } = env);
      for (const id of ['lab', 'old']) await insertSite(handle.db, { id, name: id });
    },
    { timeout: 90_000 },
  );
  after(() => env?.close());

  it('records every listed site in one check: no poller on its queue is no last poll; the gauges say so', async () => {
    const deps = { db: handle.db, client, namespace: 'default', log, metrics };
    const before = Date.now();
    const readings = await checkSatellites(deps);
    assert.deepEqual(
      readings.map((r) => [r.siteId, r.pollers, r.lastSeenAt]),
      [
        ['lab', 0, null],
        ['old', 0, null],
      ],
    );
    const rows = await siteSatellitesOf(handle.db, ['lab', 'old']);
    assert.equal(rows.size, 2);
    assert.ok(rows.get('lab')!.checkedAt.getTime() >= before - 1000);
    const text = await registry.metrics();
    assert.match(text, /fleet_agent_site_satellite_pollers\{site_id="lab"\} 0/);
    assert.match(text, /fleet_agent_site_satellite_connected\{site_id="old"\} 0/);
  });

  it("a removed site's observer is cancelled, and the site leaves the check and the gauges", async () => {
    const observation = AgentConfig.shape.observation.parse({ checkEveryS: 1 });
    const odeps = { db: handle.db, clients: oneClient(client), log, metrics, config: observation };
    assert.deepEqual((await checkObservers(odeps)).started, ['lab', 'old']);
    await handle.pool.query(`update sites set draining_since = now(), drained_by = 'test' where id = 'old'`);
    await removeDrainedSites({ db: handle.db, log });
    assert.deepEqual((await checkObservers(odeps)).stopped, ['old']);
    const desc = await client.workflow.getHandle(siteObserverWorkflowId('old')).describe();
    // Cancellation is a request: with no worker it stays Running until one takes it; the request is on record.
    const history = await client.workflow.getHandle(siteObserverWorkflowId('old')).fetchHistory();
    assert.ok(
      history.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes),
      `cancel requested (${desc.status.name})`,
    );
    const readings = await checkSatellites({ db: handle.db, client, namespace: 'default', log, metrics });
    assert.deepEqual(
      readings.map((r) => r.siteId),
      ['lab'],
    );
    assert.doesNotMatch(await registry.metrics(), /site_id="old"/);
  });
});
