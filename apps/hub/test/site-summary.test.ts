import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { z } from 'zod';
import { devices, inventoryIssues, jobs, racks, sites, type DbHandle, type NewJob } from '@fleet/db';
import { ErrorBody } from '../src/route.js';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// GET /v1/sites/{id}/summary: what the fleet overview shows of a site, counted by Postgres in one statement.

describe('GET /v1/sites/{id}/summary', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let deviceIds: Record<string, string>;

  before(async () => {
    hub = await startTestHub();
    handle = hub.handle;
    const { db } = handle;
    await db.insert(sites).values([
      { id: 'ams1', name: 'Amsterdam 1', netboxId: 7 },
      { id: 'osl1', name: 'Oslo 1', netboxId: 8 },
      { id: 'empty', name: 'Nothing yet' },
    ]);
    const [r1, r2] = await db
      .insert(racks)
      .values([
        { siteId: 'ams1', name: 'r001', netboxId: 71 },
        { siteId: 'ams1', name: 'r002', netboxId: 72 },
        { siteId: 'osl1', name: 'r001', netboxId: 81 },
      ])
      .returning();
    const device = (name: string, siteId: string, more: Partial<typeof devices.$inferInsert> = {}) => ({
      name,
      siteId,
      rackId: siteId === 'ams1' ? r1!.id : null,
      ...more,
    });
    const rows = await db
      .insert(devices)
      .values([
        device('ct01', 'ams1', { role: 'compute-tray', powerState: 'On', lifecycleState: 'active' }),
        device('ct02', 'ams1', { role: 'compute-tray', powerState: 'On', lifecycleState: 'active' }),
        device('ct03', 'ams1', { role: 'compute-tray', powerState: 'Off', lifecycleState: 'failed' }),
        device('sw01', 'ams1', { role: 'nvlink-switch-tray', powerState: 'On', lifecycleState: 'active' }),
        // Registered by hand: no role, power never read.
        device('shelf', 'ams1', { rackId: r2!.id }),
        // Deleted from NetBox: kept for jobs and audit, but no longer counted.
        device('gone', 'ams1', { role: 'compute-tray', powerState: 'On', deletedAt: new Date() }),
        device('ct01', 'osl1', { role: 'compute-tray', powerState: 'On', lifecycleState: 'planned' }),
      ])
      .returning();
    deviceIds = Object.fromEntries(rows.map((d) => [`${d.name}@${d.siteId}`, d.id]));

    const issue = (objectType: string, netboxId: number, deviceId: string | null, resolved = false) => ({
      objectType,
      netboxId,
      deviceId,
      code: 'apply_failed',
      message: 'm',
      ...(resolved ? { resolvedAt: new Date() } : {}),
    });
    await db.insert(inventoryIssues).values([
      issue('dcim.device', 1, deviceIds['ct01@ams1']!),
      { ...issue('dcim.device', 1, deviceIds['ct01@ams1']!), code: 'duplicate_ip' },
      issue('dcim.device', 3, deviceIds['ct03@ams1']!, true),
      issue('dcim.device', 9, deviceIds['ct01@osl1']!),
      issue('dcim.rack', 72, null),
      issue('dcim.rack', 81, null),
      issue('dcim.site', 7, null),
      // A site NetBox has that the mirror refused: it belongs to no mirrored site.
      issue('dcim.site', 99, null),
    ]);

    const job = (siteId: string, state: string, more: Partial<NewJob> = {}): NewJob => ({
      kind: 'device.power',
      state,
      siteId,
      params: {},
      createdBy: 't-operator',
      ...more,
    });
    const [campaign] = await db
      .insert(jobs)
      .values(job('ams1', 'running', { kind: 'firmware.campaign' }))
      .returning();
    await db.insert(jobs).values([
      job('ams1', 'queued', { deviceId: deviceIds['sw01@ams1']! }),
      job('ams1', 'cancelling', { kind: 'rack.power', rackId: r1!.id }),
      job('ams1', 'succeeded'),
      job('ams1', 'failed'),
      job('ams1', 'cancelled'),
      // The campaign's per-device children are counted through the campaign, not one by one.
      job('ams1', 'running', { parentId: campaign!.id, deviceId: deviceIds['ct01@ams1']! }),
      job('ams1', 'queued', { parentId: campaign!.id, deviceId: deviceIds['ct02@ams1']! }),
      job('osl1', 'running', { deviceId: deviceIds['ct01@osl1']! }),
    ]);
  });
  after(() => hub.close());

  const get = (url: string, token: string | null = hub.tokens.viewer) =>
    hub.app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });

  /**
   * The route documents the answer's status, and the answer parses with its schema (the success body, or the Error
   * shape of every failure) with no field the schema does not name.
   */
  const assertConforms = (res: LightMyRequestResponse) => {
    const path = '/v1/sites/{id}/summary';
    const documented = hub.app.apiDoc.paths[path]?.['get'] as { responses: Record<string, unknown> } | undefined;
    assert.ok(documented?.responses[res.statusCode], `${path} documents no ${res.statusCode}`);
    const reply = hub.app.apiDoc.reply('GET', path, res.statusCode);
    const schema = res.statusCode >= 400 ? ErrorBody : reply && 'body' in reply ? reply.body : undefined;
    assert.ok(schema && typeof schema !== 'string', `${path} documents no body for ${res.statusCode}`);
    const parsed = (schema as z.ZodType).safeParse(res.json());
    assert.ok(parsed.success, parsed.error?.message);
    assert.deepEqual(parsed.data, res.json());
  };

  it('counts live devices by role, power and lifecycle state, with racks, open issues and open jobs', async () => {
    const before = Date.now();
    const res = await get('/v1/sites/ams1/summary');
    assert.equal(res.statusCode, 200, res.body);
    assertConforms(res);
    const { as_of, ...counts } = res.json();
    assert.deepEqual(counts, {
      site_id: 'ams1',
      devices: 5,
      by_role: { 'compute-tray': 3, 'nvlink-switch-tray': 1, '': 1 },
      by_power_state: { On: 3, Off: 1, Unknown: 1 },
      by_lifecycle_state: { active: 4, failed: 1 },
      racks: 2,
      // Two on ct01, one on rack r002, one on the site; not the resolved one, nor osl1's.
      open_issues: 4,
      // The campaign, the queued power job and the cancelling rack sequence.
      running_jobs: 3,
    });
    assert.ok(Math.abs(Date.parse(as_of) - before) < 60_000, as_of);
  });

  it("counts only the site's own devices, racks, issues and jobs", async () => {
    const res = await get('/v1/sites/osl1/summary');
    assert.equal(res.statusCode, 200, res.body);
    const { as_of: _, ...counts } = res.json();
    assert.deepEqual(counts, {
      site_id: 'osl1',
      devices: 1,
      by_role: { 'compute-tray': 1 },
      by_power_state: { On: 1 },
      by_lifecycle_state: { planned: 1 },
      racks: 1,
      open_issues: 2,
      running_jobs: 1,
    });
  });

  it('answers zeros and empty maps for a site with nothing in it yet', async () => {
    const res = await get('/v1/sites/empty/summary');
    assert.equal(res.statusCode, 200, res.body);
    assertConforms(res);
    const { as_of: _, ...counts } = res.json();
    assert.deepEqual(counts, {
      site_id: 'empty',
      devices: 0,
      by_role: {},
      by_power_state: {},
      by_lifecycle_state: {},
      racks: 0,
      open_issues: 0,
      running_jobs: 0,
    });
  });

  it('follows changes: a power reading, a deletion and a finished job show in the next answer', async () => {
    const sql = (text: string, id: string) => handle.pool.query(text, [id]);
    await sql(`update devices set power_state = 'On' where id = $1`, deviceIds['shelf@ams1']!);
    await sql(`update devices set deleted_at = now() where id = $1`, deviceIds['ct03@ams1']!);
    await sql(`update jobs set state = 'succeeded' where device_id = $1`, deviceIds['sw01@ams1']!);
    const body = (await get('/v1/sites/ams1/summary')).json();
    assert.equal(body.devices, 4);
    assert.deepEqual(body.by_power_state, { On: 4 });
    assert.deepEqual(body.by_lifecycle_state, { active: 4 });
    assert.deepEqual(body.by_role, { 'compute-tray': 2, 'nvlink-switch-tray': 1, '': 1 });
    assert.equal(body.running_jobs, 2);
  });

  it('counts 10,000 devices in Postgres: no statement of the request returns more than one row', async () => {
    await handle.pool.query(`
      insert into devices (name, site_id, role, power_state, lifecycle_state)
      select 'big-' || g, 'empty', (array['compute-tray', 'nvlink-switch-tray', 'power-shelf', null])[g % 4 + 1],
             (array['On', 'Off'])[g % 2 + 1], case when g % 10 = 0 then 'planned' else 'active' end
        from generate_series(1, 10000) g`);
    const rowCounts: number[] = [];
    const pool = handle.pool as unknown as { query: (...args: unknown[]) => Promise<{ rowCount: number | null }> };
    const query = pool.query.bind(pool);
    pool.query = async (...args: unknown[]) => {
      const result = await query(...args);
      rowCounts.push(result.rowCount ?? 0);
      return result;
    };
    let res: LightMyRequestResponse;
    try {
      res = await get('/v1/sites/empty/summary');
    } finally {
      pool.query = query;
    }
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.devices, 10_000);
    assert.deepEqual(body.by_role, { 'compute-tray': 2500, 'nvlink-switch-tray': 2500, 'power-shelf': 2500, '': 2500 });
    assert.deepEqual(body.by_power_state, { On: 5000, Off: 5000 });
    assert.deepEqual(body.by_lifecycle_state, { active: 9000, planned: 1000 });
    assert.ok(rowCounts.length > 0, 'the request went through the pool');
    assert.ok(
      rowCounts.every((n) => n <= 1),
      `statements returned ${rowCounts.join(', ')} rows`,
    );
  });

  it('answers 404 in the error shape for an unknown site', async () => {
    const res = await get('/v1/sites/nowhere/summary');
    assert.equal(res.statusCode, 404);
    assertConforms(res);
    assert.equal(res.json().error.code, 'NOT_FOUND');
    assert.match(res.json().error.message, /site nowhere does not exist/);
  });

  it('answers 400 naming the path parameter for a malformed site id', async () => {
    for (const [url, field, issue] of [
      ['/v1/sites/ams1%00/summary', 'path.id', /control characters/],
      ['/v1/sites//summary', 'path.id', /must not be empty/],
      // Longer than any site id: the router refuses it before the route parses it.
      [`/v1/sites/${'x'.repeat(101)}/summary`, 'path', /max param length/],
    ] as const) {
      const res = await get(url);
      assert.equal(res.statusCode, 400, url);
      assertConforms(res);
      assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
      assert.equal(res.json().error.details[0].field, field, url);
      assert.match(res.json().error.details[0].issue, issue, url);
    }
  });

  it('needs a token; a viewer may read it', async () => {
    const res = await get('/v1/sites/ams1/summary', null);
    assert.equal(res.statusCode, 401);
    assertConforms(res);
    assert.equal(res.json().error.code, 'UNAUTHENTICATED');
    const openapi = (await hub.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(openapi.paths['/v1/sites/{id}/summary'].get['x-fleet-role'], 'viewer');
  });
});
