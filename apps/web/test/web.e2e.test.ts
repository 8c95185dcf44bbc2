import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from '../../../tools/lib/processes.js';
import { Stack } from '../../../test/harness/stack.js';
import { consoleUrl, ensureBuilt } from './console.js';

const screenshots = join(repoRoot, 'docs', 'screenshots');

/** Debian's chromium, headless, quiet (no network of its own), in the fresh profile Playwright makes per launch. */
function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env['FLEET_CHROMIUM'] ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** No serious or critical WCAG 2.1 A/AA violation on the page as it is now. */
async function assertAccessible(page: Page, view: string): Promise<void> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    [],
    `${view}: accessibility violations`,
  );
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function snapshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

// One simulated GB200 NVL72 rack (8 shelves, 9 switch trays, 18 compute trays), delays scaled down 200×.
describe('web console in Chromium against the full stack', () => {
  const stack = new Stack({
    racks: 1,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 5, maximumAttempts: 2, settleTimeoutS: 60 },
    pollIntervalMs: 50,
  });
  let browser: Browser;
  let web: Awaited<ReturnType<typeof consoleUrl>>;
  let rackId = '';

  before(
    async () => {
      ensureBuilt();
      mkdirSync(screenshots, { recursive: true });
      await stack.start();
      rackId = stack.rackIds.get('r001')!;
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
    },
    { timeout: 60_000 },
  );

  /** A new browser context (own session storage) signed in with `token`. */
  async function signedIn(token: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(web.url);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    return page;
  }

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
    await page.getByRole('link', { name: 'Devices', exact: true }).click();
    await page.getByRole('table', { name: /Devices \(35\)/ }).waitFor();
    await assertAccessible(page, 'devices');
    await snapshot(page, 'devices');
    await page.getByLabel('Role').selectOption('power-shelf');
    await page.getByRole('table', { name: /Devices \(8\)/ }).waitFor();

    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page
      .getByRole('table', { name: /Jobs, newest first/ })
      .getByRole('link', { name: 'rack.power' })
      .waitFor();
    await assertAccessible(page, 'jobs');
    await snapshot(page, 'jobs');

    await page.getByRole('link', { name: 'Firmware', exact: true }).click();
    await page.getByRole('heading', { name: 'Upload a package' }).waitFor();
    await page.getByRole('heading', { name: 'Packages' }).waitFor();
    await assertAccessible(page, 'firmware');
    await snapshot(page, 'firmware');

    await page.getByRole('link', { name: 'Campaigns', exact: true }).click();
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
});
