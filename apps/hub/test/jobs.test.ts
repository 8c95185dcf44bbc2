import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createApiToken, getJob, insertDevice, insertSite, racks, type DbHandle } from '@fleet/db';
import { jobView } from '../src/views.js';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// Parent jobs and their children through /v1/jobs, against a real Postgres and no Temporal.

interface JobBody {
  id: string;
  kind: string;
  state: string;
  parent_id: string | null;
  workflow_id: string | null;
  target: { device_id: string | null; rack_id: string | null; site_id: string | null };
  links: { temporal_ui: string | null };
}

describe('jobs: parents and children', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'];
  let rackJob: JobBody;
  let batchJob: JobBody;
  let single: JobBody;
  const rackDevices: string[] = [];

  const call = (method: 'GET' | 'POST', url: string, token: string, body?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const list = async (query: string) => {
    const res = await call('GET', `/v1/jobs?${query}`, tokens.viewer);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { items: JobBody[]; next_cursor: string | null };
  };
  const intents = async (jobId: string) =>
    (await handle.pool.query('select kind from intents where job_id = $1 order by id', [jobId])).rows.map(
      (r) => r.kind,
    );

  before(async () => {
    hub = await startTestHub();
    ({ handle, app, tokens } = hub);
    await insertSite(handle.db, { id: 'lab', name: 'Lab' });
    const [rack] = await handle.db
      .insert(racks)
      .values({ siteId: 'lab', name: 'r1', rackType: 'gb200_nvl72' })
      .returning();
    const inRack = { siteId: 'lab', rackId: rack!.id, credentialRef: 'bmc/default' };
    rackDevices.push(
      (
        await insertDevice(handle.db, {
          ...inRack,
          name: 'shelf-1',
          role: 'power-shelf',
          nodeType: 'powershelf_gb200_liteon',
          bmcUrl: 'http://127.0.0.1:9100',
        })
      ).id,
    );
    for (let i = 0; i < 6; i++) {
      rackDevices.push(
        (
          await insertDevice(handle.db, {
            ...inRack,
            name: `tray-${i}`,
            role: 'compute-tray',
            nodeType: 'compute_gb200_nvidia',
            bmcUrl: `http://127.0.0.1:${9101 + i}`,
          })
        ).id,
      );
    }
    await insertSite(handle.db, { id: 'lab2', name: 'Lab 2' });
    const loose = await Promise.all(
      [0, 1].map((i) =>
        insertDevice(handle.db, {
          name: `loose-${i}`,
          siteId: 'lab2',
          role: 'compute-tray',
          nodeType: 'compute_gb200_nvidia',
          bmcUrl: `http://127.0.0.1:${9200 + i}`,
          credentialRef: 'bmc/default',
        }),
      ),
    );
    single = (await call('POST', `/v1/devices/${loose[0]!.id}/power`, tokens.operator, { action: 'on' })).json();
    batchJob = (await call('POST', '/v1/power-batches', tokens.operator, { site_id: 'lab2', action: 'on' })).json();
    // The rack sequence is the newest job; its 7 children share its created_at (one transaction).
    const res = await call('POST', `/v1/racks/${rack!.id}/power`, tokens.operator, { op: 'on' });
    assert.equal(res.statusCode, 202, res.body);
    rackJob = res.json();
  });
  after(() => hub.close());

  it('lists top-level jobs by default: limit=1 is the newest parent, never one of its children', async () => {
    const { rows } = await handle.pool.query(
      'select count(distinct created_at)::int as n from jobs where id = $1 or parent_id = $1',
      [rackJob.id],
    );
    assert.equal(rows[0].n, 1, 'the parent and its children share created_at');
    const newest = await list('limit=1');
    assert.deepEqual(
      newest.items.map((j) => j.id),
      [rackJob.id],
    );
    const all = await list('limit=1000');
    assert.deepEqual(all.items.map((j) => j.id).sort(), [rackJob.id, batchJob.id, single.id].sort());
    assert.ok(all.items.every((j) => j.parent_id === null));
  });

  it('the OpenAPI document says what the listing returns without and with parent_id', async () => {
    const doc = (await call('GET', '/openapi.json', tokens.viewer)).json();
    const params = doc.paths['/v1/jobs'].get.parameters as { name: string; schema: { description?: string } }[];
    assert.match(params.find((p) => p.name === 'parent_id')!.schema.description ?? '', /children.*only top-level jobs/);
    assert.match(doc.paths['/v1/jobs/{id}/cancel'].post.summary, /409 naming the parent/);
  });

  it(`parent_id lists that parent's children in a stable (created_at, id) order, paged without gaps or \
repeats`, async () => {
    const children = await list(`parent_id=${rackJob.id}&limit=1000`);
    assert.equal(children.items.length, rackDevices.length);
    assert.deepEqual(children.items.map((j) => j.target.device_id).sort(), [...rackDevices].sort());
    assert.ok(children.items.every((j) => j.parent_id === rackJob.id));
    const ids = children.items.map((j) => j.id);
    assert.deepEqual(ids, [...ids].sort().reverse(), 'equal created_at: newest first falls back to id, descending');
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: JobBody[]; next_cursor: string | null } = await list(
        `parent_id=${rackJob.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      paged.push(...page.items.map((j) => j.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(paged, ids);
  });

  it('device_id lists every job on the device, its part of a rack sequence included', async () => {
    const res = await list(`device_id=${rackDevices[1]}`);
    assert.deepEqual(
      res.items.map((j) => j.parent_id),
      [rackJob.id],
    );
  });

  it(`rack_id lists the rack's own jobs, however many newer jobs other racks of its site have; with parent_id, \
the sequence's device jobs`, async () => {
    const rackId = rackJob.target.rack_id!;
    // Newer than the sequence: 250 open jobs on another rack of the same site, past any first page of the site's jobs.
    const { rows } = await handle.pool.query<{ id: string }>(
      `insert into racks (name, site_id) select 'other-rack', site_id from racks where id = $1 returning id`,
      [rackId],
    );
    const other = rows[0]!.id;
    await handle.pool.query(
      `insert into jobs (kind, state, site_id, rack_id, params, created_by, created_at)
       select 'rack.power', 'succeeded', site_id, $2, '{}', 'test', now() + make_interval(secs => g)
       from racks, generate_series(1, 250) g where racks.id = $1`,
      [rackId, other],
    );
    try {
      const site = await list(`site_id=${rackJob.target.site_id}&limit=200`);
      assert.ok(!site.items.some((j) => j.id === rackJob.id), "the site's first page no longer holds the sequence");
      // As the web's rack elevation asks: the rack's open jobs.
      const onRack = await list(`rack_id=${rackId}&state=queued&state=running&state=cancelling&limit=200`);
      assert.deepEqual(
        onRack.items.map((j) => j.id),
        [rackJob.id],
      );
      const children = await list(`rack_id=${rackId}&parent_id=${rackJob.id}&limit=200`);
      assert.equal(children.items.length, rackDevices.length);
      const onOther = await list(`rack_id=${other}&limit=300`);
      assert.equal(onOther.items.length, 250);
      assert.ok(onOther.items.every((j) => j.target.rack_id === other));
      assert.equal((await list(`rack_id=${other}&state=running`)).items.length, 0);
      // A token limited to another site lists nothing of this rack.
      const elsewhere = (await createApiToken(handle.db, 't-lab2', 'viewer', { sites: ['lab2'] })).token;
      const scoped = await call('GET', `/v1/jobs?rack_id=${rackId}`, elsewhere);
      assert.equal(scoped.statusCode, 200, scoped.body);
      assert.deepEqual(scoped.json().items, []);
      assert.equal((await call('GET', '/v1/jobs?rack_id=rack-1', tokens.viewer)).statusCode, 400);
    } finally {
      await handle.pool.query('delete from jobs where rack_id = $1', [other]);
      await handle.pool.query('delete from racks where id = $1', [other]);
    }
  });

  it(`a rack sequence's child names its parent's workflow; a batch has no workflow, its children have their \
own`, async () => {
    const child = (await list(`parent_id=${rackJob.id}&limit=1`)).items[0]!;
    assert.equal(child.workflow_id, rackJob.id);
    assert.equal((await call('GET', `/v1/jobs/${child.id}`, tokens.viewer)).json().workflow_id, rackJob.id);
    assert.equal(rackJob.workflow_id, rackJob.id);
    const batch = (await call('GET', `/v1/jobs/${batchJob.id}`, tokens.viewer)).json() as JobBody;
    assert.equal(batch.workflow_id, null, 'a batch only aggregates its children');
    const batchChild = (await list(`parent_id=${batchJob.id}&limit=1`)).items[0]!;
    assert.equal(batchChild.workflow_id, batchChild.id);
    assert.equal(single.workflow_id, single.id);
  });

  it('the Temporal UI link opens the workflow that runs the job, or is null when none does', async () => {
    const ctx = { temporalUiUrl: 'http://ui:8233/', temporalNamespace: 'fleet' };
    const child = (await getJob(handle.db, (await list(`parent_id=${rackJob.id}&limit=1`)).items[0]!.id))!;
    assert.equal(
      jobView(child, ctx, undefined, 'rack.power').links.temporal_ui,
      `http://ui:8233/namespaces/fleet/workflows/${rackJob.id}`,
    );
    assert.equal(jobView((await getJob(handle.db, batchJob.id))!, ctx).links.temporal_ui, null);
    assert.equal(
      jobView((await getJob(handle.db, single.id))!, ctx).links.temporal_ui,
      `http://ui:8233/namespaces/fleet/workflows/${single.id}`,
    );
  });

  it("cancelling a rack sequence's child is a 409 naming the parent to cancel; nothing is written", async () => {
    const child = (await list(`parent_id=${rackJob.id}&limit=1`)).items[0]!;
    const res = await call('POST', `/v1/jobs/${child.id}/cancel`, tokens.operator);
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().error.code, 'FAILED_PRECONDITION');
    assert.match(
      res.json().error.message,
      new RegExp(`rack.power job ${rackJob.id}.*POST /v1/jobs/${rackJob.id}/cancel`),
    );
    assert.equal(res.json().error.details[0].field, 'path.id');
    assert.equal((await getJob(handle.db, child.id))!.state, 'queued');
    assert.deepEqual(await intents(child.id), []);
    // The parent is what cancels the sequence.
    const parent = await call('POST', `/v1/jobs/${rackJob.id}/cancel`, tokens.operator);
    assert.equal(parent.statusCode, 202, parent.body);
    assert.deepEqual(await intents(rackJob.id), ['start', 'cancel']);
  });

  it("cancelling a campaign's device job is a 409 naming the campaign; a batch child is cancelled alone", async () => {
    const device = await insertDevice(handle.db, {
      name: 'campaign-tray',
      siteId: 'lab2',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'http://127.0.0.1:9300',
      credentialRef: 'bmc/default',
    });
    const { rows } = await handle.pool.query(
      `with c as (insert into jobs (kind, state, site_id, params, created_by)
         values ('firmware.campaign', 'running', 'lab2', '{}', 't') returning id)
       insert into jobs (kind, state, site_id, device_id, parent_id, params, created_by)
       select 'device.firmware_update', 'queued', 'lab2', $1, c.id, '{}', 't' from c
       returning id, parent_id`,
      [device.id],
    );
    const campaignChild = rows[0] as { id: string; parent_id: string };
    const refused = await call('POST', `/v1/jobs/${campaignChild.id}/cancel`, tokens.operator);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(
      refused.json().error.message,
      new RegExp(`firmware.campaign job ${campaignChild.parent_id}.*cancel the parent`),
    );
    assert.deepEqual(await intents(campaignChild.id), []);

    // A batch child is a workflow of its own that nothing else waits on.
    const batchChild = (await list(`parent_id=${batchJob.id}`)).items;
    assert.equal(batchChild.length, 1, 'loose-0 was busy with the single job');
    const res = await call('POST', `/v1/jobs/${batchChild[0]!.id}/cancel`, tokens.operator);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().state, 'cancelling');
    assert.deepEqual(await intents(batchChild[0]!.id), ['start', 'cancel']);
  });
});
