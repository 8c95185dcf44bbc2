import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { unwrap } from '@fleet/client';
import { buildFwpkg } from '@fleet/fwpkg';
import { profilePackageSpec, profileParts } from '@fleet/simulators';
import type { Browser } from 'playwright-core';
import { manifestFor } from '../../../test/harness/firmware.js';
import { Stack } from '../../../test/harness/stack.js';
import { assertAccessible, launch, rowTexts, screenshots, signIn, snapshot, until } from './browser.js';
import { consoleUrl, ensureBuilt } from './console.js';

// One simulated GB200 NVL72 rack (8 shelves, 9 switch trays, 18 compute trays), delays scaled down 200×; the compute
// trays' default manifest (25.10.0) gives a campaign work to do.
describe('web console in Chromium against the full stack', () => {
  const stack = new Stack({
    racks: 1,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 5, maximumAttempts: 2, settleTimeoutS: 60 },
    pollIntervalMs: 50,
    firmware: { taskPollS: 0.2, pushDelayS: 0.2, acStabilizeS: 0.2, powerStateTimeoutS: 30, bmcRecoveryS: 60 },
  });
  const files = mkdtempSync(join(tmpdir(), 'fleet-web-e2e-'));
  let browser: Browser;
  let web: Awaited<ReturnType<typeof consoleUrl>>;
  let rackId = '';
  /** The components the compute trays' default manifest updates. */
  let manifestComponents: string[] = [];

  before(
    async () => {
      ensureBuilt();
      mkdirSync(screenshots, { recursive: true });
      await stack.start();
      rackId = stack.rackIds.get('r001')!;
      ({ components: manifestComponents } = await manifestFor(
        stack,
        'gb200-compute',
        'compute_gb200_nvidia',
        '25.10.0',
        {
          isDefault: true,
        },
      ));
      web = await consoleUrl(stack.hubUrl);
      browser = await launch();
    },
    { timeout: 240_000 },
  );
  after(
    async () => {
      await browser?.close();
      await web?.close();
      await stack.stop();
      rmSync(files, { recursive: true, force: true });
    },
    { timeout: 60_000 },
  );

  const packageCount = async () =>
    (await unwrap(stack.client('viewer').GET('/v1/firmware/packages', { params: { query: { limit: 1000 } } }))).items
      .length;

  const signedIn = (token: string) => signIn(browser, web.url, token);

  it('signs in with a token kept in session storage only, refuses an unknown one with the hub message', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(web.url);
    await assertAccessible(page, 'sign-in');
    await snapshot(page, 'sign-in');
    await page.getByLabel('API token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'unknown or revoked' }).waitFor();

    await page.getByLabel('API token').fill(stack.tokens.operator);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('fleet.token')), stack.tokens.operator);
    assert.ok(!page.url().includes(stack.tokens.operator), 'the token is never in the URL');
    await page.getByRole('heading', { name: new RegExp(stack.siteId) }).waitFor();
    await page.getByRole('table', { name: /Devices by role \(35\)/ }).waitFor();
    await assertAccessible(page, 'overview');
    await snapshot(page, 'overview');
    await context.close();
  });

  it('opens the rack elevation from the rack list: 35 devices at their NetBox positions, each a link', async () => {
    const page = await signedIn(stack.tokens.operator);
    await page.getByRole('link', { name: 'Sites & racks' }).click();
    await page.getByRole('table', { name: /Racks/ }).waitFor();
    await assertAccessible(page, 'sites and racks');
    await snapshot(page, 'sites-racks');
    await page.getByRole('link', { name: 'r001' }).click();
    await page.getByRole('heading', { name: /Rack r001/ }).waitFor();
    const elevation = page.getByRole('list', { name: /Front view of rack r001/ });
    await elevation.getByRole('link').first().waitFor();
    assert.equal(await elevation.getByRole('link').count(), 35);
    // The top power shelf sits at U48, the first row of the front view.
    const top = stack.fleet!.devices.find((d) => d.position === 48)!;
    const topSlot = elevation.getByRole('link', { name: new RegExp(`^U48 ${top.name} `) });
    assert.equal(await topSlot.count(), 1);
    // The front view lists U48 first: its slot starts on grid row 1.
    assert.equal(await topSlot.evaluate((a) => getComputedStyle(a.parentElement!).gridRowStart), '1');
    await page.getByLabel('Colour by').selectOption('jobs');
    await page.waitForURL(/axis=jobs/);
    await page.getByLabel('Colour by').selectOption('power');
    await assertAccessible(page, 'rack elevation');

    await topSlot.click();
    await page.getByRole('heading', { name: new RegExp(top.name) }).waitFor();
    await page.getByRole('group', { name: 'Device actions' }).waitFor();
    await assertAccessible(page, 'device detail');
    await snapshot(page, 'device');
    await page.context().close();
  });

  it(`colours a device by its open job even after that job's campaign ended (a campaign terminated in Temporal ends \
at once while its devices stop)`, async () => {
    const device = stack.fleet!.devices.find((d) => d.position === 40)!;
    const sql = (text: string, values: unknown[]) => stack.dbHandle.pool.query<{ id: string }>(text, values);
    // Written as the agent leaves them: the campaign's end, its device's job still running.
    const [campaign] = (
      await sql(
        `insert into jobs (kind, state, site_id, params, created_by, started_at, finished_at)
         values ('firmware.campaign', 'failed', $1, '{}', 'web-e2e', now(), now()) returning id`,
        [stack.siteId],
      )
    ).rows;
    const [child] = (
      await sql(
        `insert into jobs (kind, state, site_id, device_id, parent_id, params, created_by, started_at)
         values ('device.firmware_update', 'running', $1, $2, $3, '{}', 'web-e2e', now()) returning id`,
        [stack.siteId, stack.deviceIds.get(device.name), campaign!.id],
      )
    ).rows;
    const page = await signedIn(stack.tokens.viewer);
    try {
      await page.goto(`${web.url}/racks/${rackId}?axis=jobs`);
      const elevation = page.getByRole('list', { name: /Front view of rack r001/ });
      await elevation.getByRole('link', { name: new RegExp(`^U40 ${device.name} .* running$`) }).waitFor();
      const idle = await elevation.getByRole('link', { name: / idle$/ }).count();
      assert.equal(idle, 34, 'every other device is idle');
    } finally {
      await page.context().close();
      // Gone again: the later tests' job lists and screenshots show only what they did.
      await sql(`delete from jobs where id = any($1)`, [[child!.id, campaign!.id]]);
    }
  });

  it(`shows the rack's own sequence on the jobs axis, however many newer open jobs its site has`, async () => {
    const sql = (text: string, values: unknown[]) => stack.dbHandle.pool.query<{ id: string }>(text, values);
    const [sequence] = (
      await sql(
        `insert into jobs (kind, state, site_id, rack_id, params, created_by, started_at)
         values ('rack.power', 'running', $1, $2, '{}', 'web-e2e', now()) returning id`,
        [stack.siteId, rackId],
      )
    ).rows;
    const inserted = [sequence!.id];
    try {
      // Newer open jobs of the site on no rack, more than the page of 200 the view once took the rack's jobs from:
      // queued rack sequences without a rack or an intent, which neither the dispatcher nor the projection touches.
      const newer = (
        await sql(
          `insert into jobs (kind, state, site_id, params, created_by, created_at)
           select 'rack.power', 'queued', $1, '{}', 'web-e2e', now() + make_interval(secs => g)
           from generate_series(1, 210) g returning id`,
          [stack.siteId],
        )
      ).rows.map((r) => r.id);
      inserted.push(...newer);
      const page = await signedIn(stack.tokens.viewer);
      try {
        await page.goto(`${web.url}/racks/${rackId}?axis=jobs`);
        const slots = page.getByRole('list', { name: /Front view of rack r001/ }).getByRole('link');
        await until(
          async () => (await slots.filter({ hasText: / rack running$/ }).count()) === 35,
          'all 35 slots show the rack sequence running',
          15_000,
        );
      } finally {
        await page.context().close();
      }
      const { rows } = await stack.dbHandle.pool.query<{ n: number }>(
        `select count(*)::int as n from jobs where id = any($1) and state = 'queued'`,
        [newer],
      );
      assert.equal(rows[0]!.n, 210, 'the newer jobs were still open while the page was read');
    } finally {
      await sql(`delete from jobs where id = any($1)`, [inserted]);
    }
  });

  it(
    'power-cycles the rack after a confirmation naming it, and shows its stages complete without a reload',
    { timeout: 240_000 },
    async () => {
      const page = await signedIn(stack.tokens.operator);
      await page.goto(`${web.url}/racks/${rackId}`);
      await page.getByRole('heading', { name: /Rack r001/ }).waitFor();
      await page.getByRole('button', { name: 'Power cycle' }).click();
      const dialog = page.getByRole('dialog', { name: 'Power cycle rack r001?' });
      await dialog.waitFor();
      await assertAccessible(page, 'confirmation dialog');
      await dialog.getByRole('button', { name: 'Power cycle' }).click();
      await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
      await page.getByRole('heading', { name: /rack\.power/ }).waitFor();
      // Set after the client-side navigation: a reload would lose it.
      await page.evaluate(() => Object.assign(window, { fleetTestMarker: true }));

      const stages = page.locator('ol.timeline > li');
      const seen = new Set<string>();
      const deadline = Date.now() + 200_000;
      for (;;) {
        const statuses = await stages.evaluateAll((items) => items.map((li) => li.getAttribute('data-status')));
        const heading = (await page.getByRole('heading', { level: 1 }).textContent()) ?? '';
        seen.add(`${heading.replace(/^rack\.power\s*/, '')}:${statuses.join(',')}`);
        if (/succeeded|failed|cancelled/.test(heading)) break;
        assert.ok(Date.now() < deadline, `the job did not finish; seen ${[...seen].join(' | ')}`);
        await page.waitForTimeout(250);
      }
      const finalStatuses = await stages.evaluateAll((items) => items.map((li) => li.getAttribute('data-status')));
      assert.match((await page.getByRole('heading', { level: 1 }).textContent()) ?? '', /succeeded/);
      assert.deepEqual(finalStatuses, Array(6).fill('completed'), 'off and on, three device classes each');
      assert.ok(seen.size > 1, `the page changed while the job ran: ${[...seen].join(' | ')}`);
      assert.equal(await page.evaluate(() => 'fleetTestMarker' in window), true, 'no reload happened');
      await page.getByRole('table', { name: 'By state' }).getByText('succeeded').waitFor();
      await page.getByRole('link', { name: 'Open the workflow in the Temporal UI' }).waitFor();
      await assertAccessible(page, 'job detail');
      await snapshot(page, 'job-detail');

      // The rack's elevation, coloured by power state, shows every device back on.
      await page.getByRole('link', { name: 'rack r001' }).click();
      await page.getByLabel('Colour by').selectOption('power');
      const slots = page.getByRole('list', { name: /Front view of rack r001/ }).getByRole('link');
      await until(async () => (await slots.filter({ hasText: / On$/ }).count()) === 35, 'all 35 slots On', 30_000);
      await snapshot(page, 'rack-elevation');
      await page.context().close();
    },
  );

  it('lists devices (virtualised), jobs, firmware and campaigns without accessibility violations', async () => {
    const page = await signedIn(stack.tokens.operator);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Devices', exact: true }).click();
    await page.getByRole('table', { name: /Devices \(35\)/ }).waitFor();
    await assertAccessible(page, 'devices');
    await snapshot(page, 'devices');
    await page.getByLabel('Role').selectOption('power-shelf');
    await page.getByRole('table', { name: /Devices \(8\)/ }).waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs', exact: true }).click();
    await page
      .getByRole('table', { name: /Jobs, newest first/ })
      .getByRole('link', { name: 'rack.power' })
      .waitFor();
    await assertAccessible(page, 'jobs');
    await snapshot(page, 'jobs');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Firmware', exact: true }).click();
    await page.getByRole('heading', { name: 'Upload a package' }).waitFor();
    await page.getByRole('heading', { name: 'Packages' }).waitFor();
    await assertAccessible(page, 'firmware');
    await snapshot(page, 'firmware');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns', exact: true }).click();
    await page.getByRole('heading', { name: 'New campaign' }).waitFor();
    await assertAccessible(page, 'campaigns');
    await snapshot(page, 'campaigns');
    await page.context().close();
  });

  it('a viewer token sees no action controls (needs the hub to say the role: GET /v1/whoami)', async () => {
    const page = await signedIn(stack.tokens.viewer);
    await page.goto(`${web.url}/racks/${rackId}`);
    await page
      .getByRole('list', { name: /Front view of rack r001/ })
      .getByRole('link')
      .first()
      .waitFor();
    await page.getByText(/\(viewer\)/).waitFor();
    assert.equal(await page.getByRole('group', { name: 'Rack actions' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /Power|reboot/i }).count(), 0);

    const device = stack.fleet!.devices[0]!.name;
    await page
      .getByRole('link', { name: new RegExp(device) })
      .first()
      .click();
    await page.getByRole('heading', { name: new RegExp(device) }).waitFor();
    assert.equal(await page.getByRole('group', { name: 'Device actions' }).count(), 0);

    await page.goto(`${web.url}/firmware`);
    await page.getByRole('heading', { name: 'Packages' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Upload a package' }).count(), 0);
    await page.goto(`${web.url}/campaigns`);
    await page.getByRole('heading', { name: 'Campaigns', exact: true }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'New campaign' }).count(), 0);
    await page.context().close();
  });
  it(
    'uploads a firmware package with its progress, shows its PLDM components, and the parser reason for a corrupt one',
    { timeout: 120_000 },
    async () => {
      const spec = profilePackageSpec('gb200-compute', profileParts('gb200-compute')[0]!, '25.11.0');
      const good = join(files, 'tray-bmc-25.11.0.fwpkg');
      writeFileSync(good, buildFwpkg(spec));
      const corrupt = join(files, 'corrupt.fwpkg');
      writeFileSync(corrupt, Buffer.alloc(4096, 7));
      const stored = await packageCount();

      const page = await signedIn(stack.tokens.operator);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Firmware', exact: true }).click();
      const packages = page.getByRole('table', { name: 'Firmware packages, newest first' });
      await until(async () => (await packages.locator('tbody tr').count()) === stored, 'the package list', 15_000);

      await page.getByLabel('Package file').setInputFiles(good);
      const done = page.getByRole('status').filter({ hasText: /^Stored / });
      await done.waitFor();
      assert.equal(await done.textContent(), 'Stored tray-bmc-25.11.0.fwpkg (version 25.11.0).');
      await page.getByRole('progressbar', { name: /^Uploaded .* \(100 %\)$/ }).waitFor();
      await packages.getByRole('link', { name: 'tray-bmc-25.11.0.fwpkg' }).waitFor();
      assert.equal(await packageCount(), stored + 1);
      await assertAccessible(page, 'firmware upload');
      await snapshot(page, 'firmware-upload');

      // The hub parses while it streams: the reason names the DSP0267 field, and nothing is stored.
      await page.getByLabel('Package file').setInputFiles(corrupt);
      const refused = page.getByRole('alert').filter({ hasText: 'The hub refused the package' });
      await refused.waitFor();
      const reason = (await refused.textContent()) ?? '';
      assert.match(reason, /400 INVALID_ARGUMENT/);
      assert.match(reason, /not a valid PLDM firmware package \(DSP0267\): \w+/);
      assert.match(await refused.getByRole('list', { name: 'Fields' }).innerText(), /^body\.\w+ /);
      assert.equal(await done.count(), 0, 'the earlier success is no longer shown');
      assert.equal(await packageCount(), stored + 1, 'the corrupt file was not stored');
      assert.equal(await packages.getByRole('link', { name: 'corrupt.fwpkg' }).count(), 0);
      await assertAccessible(page, 'firmware upload refused');

      await packages.getByRole('link', { name: 'tray-bmc-25.11.0.fwpkg' }).click();
      await page.getByRole('heading', { level: 1, name: 'tray-bmc-25.11.0.fwpkg' }).waitFor();
      const components = await rowTexts(page.getByRole('table', { name: 'PLDM components' }));
      assert.deepEqual(
        components.map(([index, identifier, , version]) => [index, identifier, version]),
        spec.components.map((c, i) => [String(i), `0x${c.identifier.toString(16).padStart(4, '0')}`, '25.11.0']),
      );
      await assertAccessible(page, 'package detail');
      await snapshot(page, 'package-detail');
      await page.context().close();
    },
  );

  it(
    'plans a campaign (dry run), starts it with a canary, approves it at the gate and shows it succeed live',
    { timeout: 300_000 },
    async () => {
      const compute = stack.fleet!.devices.filter((d) => d.kind === 'compute');
      const campaigns = async () =>
        (await unwrap(stack.client('viewer').GET('/v1/firmware-campaigns', { params: { query: {} } }))).items;
      const page = await signedIn(stack.tokens.operator);
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Campaigns', exact: true })
        .click();
      await page.getByRole('heading', { name: 'New campaign' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('web canary');
      await page.getByLabel('Canary devices').fill('1');
      await page.getByLabel('Devices per wave').fill('50');
      await page.getByRole('button', { name: 'Preview plan (dry run)' }).click();

      // Only the compute trays have a default manifest: one canary, then the other 17 in one wave.
      const plan = page.getByRole('region', { name: 'Plan' });
      await plan.waitFor();
      assert.match(
        (await plan.locator('p').first().textContent()) ?? '',
        new RegExp(`^${compute.length} devices in 2 waves; estimated `),
      );
      const waves = await rowTexts(plan.getByRole('table', { name: 'Waves' }));
      assert.deepEqual(
        waves.map(([index, kind, devices]) => [index, kind, devices!.split(':')[0]]),
        [
          ['0', 'canary', '1'],
          ['1', 'wave', String(compute.length - 1)],
        ],
      );
      const names = new Set(compute.map((d) => d.name));
      assert.ok(names.has(waves[0]![2]!.split(': ')[1]!), `the canary is a compute tray: ${waves[0]![2]}`);
      assert.equal((await campaigns()).length, 0, 'a dry run creates nothing');
      await assertAccessible(page, 'campaign plan');
      await snapshot(page, 'campaign-plan');

      await page.getByRole('button', { name: 'Start campaign' }).click();
      await page.waitForURL(/\/campaigns\/[0-9a-f-]{36}$/);
      await page.getByRole('heading', { level: 1, name: /^Campaign web canary/ }).waitFor();
      // Set after the client-side navigation: a reload would lose it.
      await page.evaluate(() => Object.assign(window, { fleetTestMarker: true }));

      await page.getByRole('status').filter({ hasText: 'waits for approval' }).waitFor({ timeout: 150_000 });
      const results = page.getByRole('table', { name: 'Per-device results' });
      const states = async () => (await rowTexts(results)).map((cells) => cells[1]);
      await until(async () => (await states()).filter((s) => s === 'succeeded').length === 1, 'the canary', 15_000);
      assert.equal((await states()).filter((s) => s === 'queued').length, compute.length - 1, 'only the canary ran');
      await assertAccessible(page, 'campaign awaiting approval');
      await snapshot(page, 'campaign-approval');

      await page.getByRole('group', { name: 'Campaign actions' }).getByRole('button', { name: 'Approve' }).click();
      const dialog = page.getByRole('dialog', { name: 'Approve campaign web canary?' });
      await dialog.getByRole('button', { name: 'Approve' }).click();
      await dialog.waitFor({ state: 'hidden' });

      const heading = page.getByRole('heading', { level: 1 });
      const stage = page.getByText(/^Stage: /);
      const seen = new Set<string>();
      const deadline = Date.now() + 200_000;
      for (;;) {
        const text = (await heading.textContent()) ?? '';
        seen.add(`${text.replace(/^Campaign web canary\s*/, '')}:${(await stage.textContent()) ?? ''}`);
        if (/succeeded|failed|cancelled/.test(text)) break;
        assert.ok(Date.now() < deadline, `the campaign did not finish; seen ${[...seen].join(' | ')}`);
        await page.waitForTimeout(250);
      }
      assert.match((await heading.textContent()) ?? '', /succeeded$/, [...seen].join(' | '));
      assert.ok(seen.size > 1, `the page changed while the campaign ran: ${[...seen].join(' | ')}`);
      assert.equal(await page.evaluate(() => 'fleetTestMarker' in window), true, 'no reload happened');
      await until(
        async () => (await states()).every((s) => s === 'succeeded') && (await states()).length === compute.length,
        'every device succeeded in the table',
        15_000,
      );
      // A tray's components fold into a summary by status.
      const n = manifestComponents.length;
      const summaries = await results.locator('tbody td:nth-child(4) summary').allTextContents();
      assert.equal(summaries.length, compute.length);
      assert.deepEqual(new Set(summaries), new Set([`${n} components: ${n} updated`]));
      assert.equal(await page.getByRole('group', { name: 'Campaign actions' }).count(), 0, 'no action once done');
      await assertAccessible(page, 'campaign detail');
      await snapshot(page, 'campaign-detail');
      await page.context().close();
    },
  );

  it(
    'the audit log filters by action, actor and time, follows its cursor, links targets; a device shows its trail',
    { timeout: 120_000 },
    async () => {
      // 60 refused requests (refusals are audited too): more than the 50 rows of a page.
      for (let i = 0; i < 60; i++) {
        const refused = await stack.api('POST', '/v1/firmware-campaigns', {}, stack.tokens.viewer);
        assert.equal(refused.status, 403);
      }
      const page = await signedIn(stack.tokens.viewer);
      await page.getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
      await page.getByRole('table', { name: /^Audit log, newest first \(50\+\)$/ }).waitFor();

      await page.getByLabel('Action').fill('firmware.campaign.approve');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/action=firmware\.campaign\.approve/);
      const approvals = page.getByRole('table', { name: 'Audit log, newest first (1)' });
      await approvals.waitFor();
      const [row] = await rowTexts(approvals);
      const [time, actor, action, outcome, target] = row!;
      assert.match(time!, /^(.+ ago|now) · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
      assert.deepEqual(
        [actor, action, outcome],
        ['test-operator (operator)', 'firmware.campaign.approve', 'accepted 202'],
      );
      assert.match(target!, /^campaign [0-9a-f]{8}$/);
      await assertAccessible(page, 'audit log');
      await snapshot(page, 'audit');
      await approvals.getByRole('link', { name: target! }).click();
      await page.getByRole('heading', { level: 1, name: /^Campaign web canary/ }).waitFor();
      await page.goBack();

      // The viewer's refusals: a page of 50, then the cursor's remaining 10.
      await page.getByLabel('Action').fill('POST /v1/firmware-campaigns');
      await page.getByLabel('Actor (token name)').fill('test-viewer');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      const refusals = page.getByRole('table', { name: /^Audit log, newest first \(50\+\)$/ });
      await refusals.waitFor();
      assert.deepEqual(new Set((await rowTexts(refusals)).map((r) => r[3])), new Set(['rejected 403']));
      await page.getByRole('button', { name: 'Load more' }).click();
      await page.getByRole('table', { name: 'Audit log, newest first (60)' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);

      // Times are local in the form and RFC 3339 in the URL; an hour ahead matches nothing.
      const inAnHour = await page.evaluate(() => {
        const d = new Date(Date.now() + 3_600_000);
        return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
      });
      await page.getByLabel('Since (local time)').fill(inAnHour);
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByText('No audit row matches.').waitFor();
      assert.match(decodeURIComponent(page.url()), /since="?\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z/);
      // Until before since: the hub's 400 names the field.
      await page.getByLabel('Until (local time)').fill('2020-01-01T00:00');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      const refusedFilter = page.getByRole('alert').filter({ hasText: 'The audit log could not be loaded' });
      await refusedFilter.waitFor();
      assert.match((await refusedFilter.textContent()) ?? '', /query\.until: must not be before since/);
      await page.context().close();

      // An operator's action on a device shows in the device's trail, linked to its job.
      const operator = await signedIn(stack.tokens.operator);
      const device = stack.fleet!.devices.find((d) => d.kind === 'powershelf')!;
      await operator.goto(`${web.url}/devices/${stack.deviceIds.get(device.name)}`);
      await operator.getByRole('heading', { level: 1, name: new RegExp(device.name) }).waitFor();
      const trail = operator.getByRole('region', { name: 'Audit trail' });
      await trail.getByText(/No request has acted on this device yet|Accepted requests on this device/).waitFor();
      await operator.getByRole('button', { name: 'Refresh power state' }).click();
      await operator
        .getByRole('dialog', { name: `Read the power state of ${device.name} now?` })
        .getByRole('button', { name: 'Refresh power state' })
        .click();
      await operator.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
      const jobId = operator.url().split('/').pop()!;
      await operator.goBack();
      const entries = trail.getByRole('table', { name: /^Accepted requests on this device, newest first/ });
      await entries.getByRole('link', { name: `job ${jobId.slice(0, 8)}` }).waitFor();
      const [latest] = await rowTexts(entries);
      assert.deepEqual(latest!.slice(1, 4), ['test-operator (operator)', 'device.power_refresh', 'accepted 202']);
      await assertAccessible(operator, 'device audit trail');
      await operator.context().close();
    },
  );

  // Last: the tray it enrols ends failed, with a faulted GPU.
  it(
    'enrols a tray with a faulted GPU: the job waits for a decision at the profile check, a reject with its reason ' +
      'fails it, and the device shows its lifecycle, conditions and hardware with the difference',
    { timeout: 240_000 },
    async () => {
      const tray = stack.fleet!.devices.filter((d) => d.kind === 'compute').at(-1)!;
      const trayId = stack.deviceIds.get(tray.name)!;
      const fault = await fetch(`${stack.simAdminUrl}/bmcs/${tray.name}/health/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ part: 'gpu', gpu: 2, reason: 'XID 79' }),
      });
      assert.equal(fault.status, 200, await fault.text());
      const page = await signedIn(stack.tokens.operator);

      // The rack's enrolment asks first, naming the rack (cancelled here: it needs a SLURM for its burn-in).
      await page.goto(`${web.url}/racks/${rackId}`);
      await page.getByRole('group', { name: 'Rack actions' }).getByRole('button', { name: 'Enrol rack' }).click();
      const rackDialog = page.getByRole('dialog', { name: 'Enrol rack r001?' });
      await rackDialog.getByRole('button', { name: 'Cancel' }).click();
      await rackDialog.waitFor({ state: 'hidden' });

      await page.goto(`${web.url}/devices/${trayId}`);
      const lifecycle = page.getByRole('region', { name: 'Lifecycle and hardware' });
      await lifecycle.getByText(/^Not read yet: enrol the device/).waitFor();
      await lifecycle.getByText(/^Lifecycle discovered since /).waitFor();
      assert.equal(await lifecycle.getByRole('button', { name: 'Burn in' }).count(), 0, 'not enrolled yet');
      await lifecycle.getByRole('button', { name: 'Enrol' }).click();
      await page
        .getByRole('dialog', { name: `Enrol ${tray.name}?` })
        .getByRole('button', { name: 'Enrol' })
        .click();
      await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
      await page.getByRole('heading', { level: 1, name: /device\.enrol/ }).waitFor();

      const panel = page.getByRole('region', { name: 'Waiting for a decision' });
      await panel.waitFor({ timeout: 120_000 });
      await panel.getByText(/^Stage profile_check failed for 1 device/).waitFor();
      await panel.getByRole('link', { name: tray.name }).waitFor();
      const [waiting] = await rowTexts(panel.getByRole('table', { name: 'Devices waiting for a decision' }));
      assert.equal(waiting![1], tray.name);
      assert.match(waiting![2]!, /GPU_2 health is /);
      assert.equal(await panel.getByRole('button', { name: 'Skip' }).count(), 0, 'skip is for admins');
      await assertAccessible(page, 'job waiting for a decision');
      await snapshot(page, 'job-decision');

      await panel.getByRole('button', { name: 'Reject' }).click();
      const dialog = page.getByRole('dialog', { name: `Reject stage profile_check for ${tray.name}?` });
      const reject = dialog.getByRole('button', { name: 'Reject' });
      assert.equal(await reject.isDisabled(), true, 'a reason is required');
      await dialog.getByLabel(/^Reason/).fill('GPU_2 XID 79: RMA');
      await reject.click();
      await dialog.waitFor({ state: 'hidden' });
      // Every device of the job rejected: it fails, live, and the panel goes.
      await page.getByRole('heading', { level: 1, name: 'device.enrol failed' }).waitFor({ timeout: 60_000 });
      assert.equal(await panel.count(), 0);

      await page.goto(`${web.url}/devices/${trayId}`);
      await lifecycle.getByText(/^Lifecycle failed since /).waitFor({ timeout: 30_000 });
      await lifecycle.getByRole('table', { name: 'Conditions' }).getByText('BMCReachable').waitFor();
      const differences = lifecycle.getByRole('table', { name: /^Differences from the expected profile/ });
      await differences.waitFor();
      const rows = await rowTexts(differences);
      assert.ok(
        rows.some(([code, subject]) => code === 'health' && subject === 'GPU_2'),
        JSON.stringify(rows),
      );
      await lifecycle.getByRole('table', { name: /^Parts \(\d+\)$/ }).waitFor();
      // Failed again: it may enrol again, and still not burn in.
      await lifecycle.getByRole('button', { name: 'Enrol' }).waitFor();
      assert.equal(await lifecycle.getByRole('button', { name: 'Burn in' }).count(), 0);
      await assertAccessible(page, 'device lifecycle and hardware');
      await snapshot(page, 'device-hardware');
      await page.context().close();
    },
  );
});
