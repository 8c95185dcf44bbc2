import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Payload } from '@temporalio/client';
import { satelliteSilenceLimitS } from '@fleet/domain';
import { EncryptionCodec, keyIdMetadata, parseKeyRing, PayloadDecryptionError } from '@fleet/temporal/codec';
import { Stack, expectStatus } from '../harness/stack.js';

interface JobBody {
  id: string;
  state: string;
  error: { code: string; message: string } | null;
}
interface SiteBody {
  id: string;
  state: string;
  task_queue: string;
  satellite: { status: string; pollers: number; last_seen_at: string | null };
}
interface CreatedSiteBody extends SiteBody {
  satellite_token: { id: string; name: string; role: string; token: string | null };
}

/** The lines of a satellite's log that name a job's workflow (the activity's attempt log carries its workflowId). */
const linesOf = (log: string, jobId: string) => log.split('\n').filter((l) => l.includes(`"workflowId":"${jobId}"`));

describe('many sites: each site on its own satellite; sites added, removed and watched through the API', () => {
  // Three trays per site: bmc-0001..3 are site A's, bmc-0004..6 site B's, each site's in a simulator process of its own
  // (the scale bench's layout).
  const stack = new Stack({ sites: 2, bmcs: 3, timeScale: 0.02, simulatorPerSite: true });
  const [siteA, siteB] = stack.siteIds as [string, string];
  const siteC = stack.siteId.replace(/-01$/, '-03');
  before(() => stack.start(), { timeout: 180_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  const viewer = () => stack.tokens.viewer;
  const site = async (id: string) =>
    (await stack.api('GET', `/v1/sites/${id}`, undefined, viewer()).then(expectStatus(200))).body as SiteBody;
  const listed = async () =>
    ((await stack.api('GET', '/v1/sites', undefined, viewer()).then(expectStatus(200))).body as { items: SiteBody[] })
      .items;
  const power = async (deviceId: string, action = 'on') =>
    (
      await stack
        .api('POST', `/v1/devices/${deviceId}/power`, { action }, stack.tokens.operator)
        .then(expectStatus(202))
    ).body as JobBody;
  async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = await probe();
      if (got !== undefined) return got;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const satelliteIs = (id: string, status: string, timeoutMs: number) =>
    until(`site ${id} satellite ${status}`, timeoutMs, async () => {
      const s = await site(id);
      return s.satellite.status === status ? s : undefined;
    });

  it("a power job in each site runs on that site's satellite only", async () => {
    const [a, b] = [stack.deviceIds.get('bmc-0001')!, stack.deviceIds.get('bmc-0004')!];
    const [jobA, jobB] = await Promise.all([power(a), power(b)]);
    for (const job of [jobA, jobB]) {
      const done = (await stack.waitForJob(job.id)) as unknown as JobBody;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    }
    const logA = stack.satellites.get(siteA)!.output;
    const logB = stack.satellites.get(siteB)!.output;
    assert.ok(
      linesOf(logA, jobA.id).some((l) => l.includes('reset sent') && l.includes(a)),
      'A ran A',
    );
    assert.ok(
      linesOf(logB, jobB.id).some((l) => l.includes('reset sent') && l.includes(b)),
      'B ran B',
    );
    assert.deepEqual(linesOf(logA, jobB.id), [], "site A's satellite never ran site B's job");
    assert.deepEqual(linesOf(logB, jobA.id), [], "site B's satellite never ran site A's job");
    // The BMCs saw exactly the resets of their own site's job, and the others nothing.
    for (const bmc of ['bmc-0001', 'bmc-0004']) {
      const posts = (await stack.simRequests(bmc)).filter((r) => r.method === 'POST');
      assert.deepEqual(
        posts.map((r) => r.body),
        [{ ResetType: 'On' }],
        bmc,
      );
    }
    for (const bmc of ['bmc-0002', 'bmc-0003', 'bmc-0005', 'bmc-0006'])
      assert.equal((await stack.simRequests(bmc)).length, 0, bmc);
    // Each site's BMCs are another process's: A's simulator does not know B's BMC.
    assert.equal(new Set(stack.simulators.map((s) => s.pid)).size, 2);
    const [adminA, adminB] = [stack.simAdminUrlOf('bmc-0001'), stack.simAdminUrlOf('bmc-0004')];
    assert.notEqual(adminA, adminB);
    assert.equal((await fetch(`${adminA}/bmcs/bmc-0004/requests`)).status, 404);
    assert.equal((await fetch(`${adminB}/bmcs/bmc-0001/requests`)).status, 404);

    for (const id of [siteA, siteB]) {
      const s = await satelliteIs(id, 'connected', 15_000);
      assert.equal(s.task_queue, `site-${id}`);
      assert.ok(s.satellite.pollers >= 1 && s.satellite.last_seen_at, JSON.stringify(s.satellite));
    }
  });

  it("each site's payloads are encrypted with its own key ring, which no other site's satellite holds", async () => {
    const [a, b] = [stack.deviceIds.get('bmc-0001')!, stack.deviceIds.get('bmc-0004')!];
    const [jobA, jobB] = await Promise.all([power(a, 'force-off'), power(b, 'force-off')]);
    for (const job of [jobA, jobB])
      assert.equal(((await stack.waitForJob(job.id)) as unknown as JobBody).state, 'succeeded');
    const ringOf = (site: string) => JSON.parse(stack.siteKeyRings.get(site)!) as { keys: Record<string, string> };
    // The key ids on the stored payloads (histories as Temporal holds them, not decoded).
    const keyIds = async (jobId: string) =>
      stack.withTemporal(async (client) => {
        const history = await client.workflow.getHandle(jobId).fetchHistory();
        const ids = new Set<string>();
        const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
        for (const p of input) ids.add(Buffer.from(p.metadata?.[keyIdMetadata] ?? []).toString());
        return [...ids];
      });
    assert.deepEqual(await keyIds(jobA.id), Object.keys(ringOf(siteA).keys));
    assert.deepEqual(await keyIds(jobB.id), Object.keys(ringOf(siteB).keys));
    // Site B's satellite holds B's ring only: A's input is unreadable to it.
    const started = await stack.withTemporal(
      async (client) => (await client.workflow.getHandle(jobA.id).fetchHistory()).events![0]!,
    );
    const payload = started.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const bRing = parseKeyRing(stack.siteKeyRings.get(siteB)!, 'site B');
    await assert.rejects(
      new EncryptionCodec(bRing).decode([payload as Payload]),
      (err: unknown) => err instanceof PayloadDecryptionError && err.reason === 'unknown-key',
    );
    const aRing = parseKeyRing(stack.siteKeyRings.get(siteA)!, 'site A');
    assert.ok((await new EncryptionCodec(aRing).decode([payload as Payload]))[0]!.data, "A's ring reads it");
  });

  /** Site C's two trays: the simulator has no spare BMCs, so they are two of site A's, which A never operates. */
  const trayC: string[] = [];

  it('a site added through the API runs its job on a satellite started with the token the answer carried', async () => {
    const res = await stack
      .api('POST', '/v1/sites', { id: siteC, name: 'Added site' }, stack.tokens.admin)
      .then(expectStatus(201));
    const created = res.body as CreatedSiteBody;
    assert.equal(created.task_queue, `site-${siteC}`);
    assert.equal(created.state, 'active');
    assert.equal(created.satellite.status, 'unknown');
    assert.equal(created.satellite_token.role, 'satellite');
    assert.match(created.satellite_token.token ?? '', /^fleet_/);
    const token = await stack
      .api('GET', `/v1/tokens/${created.satellite_token.id}`, undefined, stack.tokens.admin)
      .then(expectStatus(200));
    assert.deepEqual((token.body as { sites: string[] }).sites, [siteC]);

    for (const bmc of stack.bmcs.filter((b) => ['bmc-0002', 'bmc-0003'].includes(b.id))) {
      const body = {
        name: `${siteC}-${bmc.id}`,
        site_id: siteC,
        node_type: 'compute_gb200_nvidia',
        bmc_url: bmc.url,
        credential_ref: 'bmc/default',
      };
      const device = await stack.api('POST', '/v1/devices', body, stack.tokens.admin).then(expectStatus(201));
      trayC.push((device.body as { id: string }).id);
    }
    stack.satelliteTokens.set(siteC, created.satellite_token.token!);
    await stack.startSatellite(siteC);
    await satelliteIs(siteC, 'connected', 15_000);

    const job = await power(trayC[0]!);
    const done = (await stack.waitForJob(job.id)) as unknown as JobBody;
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.ok(linesOf(stack.satellites.get(siteC)!.output, job.id).some((l) => l.includes('reset sent')));
    for (const other of [siteA, siteB]) assert.deepEqual(linesOf(stack.satellites.get(other)!.output, job.id), []);
    assert.equal((await stack.simRequests('bmc-0002')).filter((r) => r.method === 'POST').length, 1);
  });

  it('a removed site drains: new jobs are a 409 naming it while its job runs, and it is removed after', async () => {
    // Its satellite down, site C's next job stays running: the drain must wait for it.
    await stack.satellites.get(siteC)!.stop();
    const running = await power(trayC[0]!, 'off');
    const removal = await stack.api('DELETE', `/v1/sites/${siteC}`, undefined, stack.tokens.admin);
    expectStatus(202)(removal);
    assert.equal((removal.body as SiteBody).state, 'draining');
    assert.equal((await stack.api('DELETE', `/v1/sites/${siteC}`, undefined, stack.tokens.operator)).status, 403);

    const refused = await stack.api('POST', `/v1/devices/${trayC[1]}/power`, { action: 'on' }, stack.tokens.operator);
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.match(JSON.stringify(refused.body), new RegExp(`site ${siteC} is draining`));
    // Other sites take work as before.
    const elsewhere = await power(stack.deviceIds.get('bmc-0005')!);
    assert.equal(((await stack.waitForJob(elsewhere.id)) as unknown as JobBody).state, 'succeeded');
    // Still draining, still listed, while its job runs.
    await new Promise((r) => setTimeout(r, 2_500));
    assert.equal((await site(siteC)).state, 'draining');
    assert.ok((await listed()).some((s) => s.id === siteC));

    await stack.startSatellite(siteC);
    assert.equal(((await stack.waitForJob(running.id)) as unknown as JobBody).state, 'succeeded');
    await until('site C removed', 15_000, async () => ((await site(siteC)).state === 'removed' ? true : undefined));
    assert.ok(!(await listed()).some((s) => s.id === siteC), 'a removed site leaves the list');
    // Its jobs and audit remain; its satellite token is revoked.
    await stack.api('GET', `/v1/jobs/${running.id}`, undefined, viewer()).then(expectStatus(200));
    const { rows } = await stack.dbHandle.pool.query<{ action: string; actor: string }>(
      `select action, actor from audit_log where target = $1 order by id`,
      [`site/${siteC}`],
    );
    assert.deepEqual(
      rows.map((r) => [r.action, r.actor]),
      [
        ['site.create', 'test-admin'],
        ['site.remove', 'test-admin'],
        ['site.removed', 'workflow-agent'],
      ],
    );
    await until('satellite token refused', 10_000, async () => {
      const res = await stack.api('GET', `/v1/sites/${siteC}`, undefined, stack.satelliteTokens.get(siteC));
      return res.status === 401 ? true : undefined;
    });
    await stack.satellites.get(siteC)!.stop();
  });

  it("a stopped satellite's site turns disconnected within the silence limit, the other stays connected", async () => {
    await satelliteIs(siteB, 'connected', 15_000);
    await stack.satellites.get(siteB)!.stop();
    const stopped = Date.now();
    await satelliteIs(siteB, 'disconnected', (satelliteSilenceLimitS + 15) * 1000);
    assert.ok(Date.now() - stopped <= (satelliteSilenceLimitS + 15) * 1000);
    assert.equal((await site(siteA)).satellite.status, 'connected');
    assert.equal(
      (await listed()).find((s) => s.id === siteB)?.satellite.status,
      'disconnected',
      'the list shows it too',
    );

    await stack.startSatellite(siteB);
    await satelliteIs(siteB, 'connected', 15_000);
    const job = await power(stack.deviceIds.get('bmc-0006')!);
    assert.equal(((await stack.waitForJob(job.id)) as unknown as JobBody).state, 'succeeded');
  });
});
