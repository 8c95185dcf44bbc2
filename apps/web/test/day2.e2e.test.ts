import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createApiToken } from '@fleet/db';
import type { Browser, Page } from 'playwright-core';
import { Stack } from '../../../test/harness/stack.js';
import { assertAccessible, launch, rowTexts, screenshots, signIn, snapshot } from './browser.js';
import { consoleUrl, ensureBuilt } from './console.js';

// Day-2 operations in the console (docs/day2.md, "Console and CLI"): a device's health from the site's observer, its
// quarantine, release and RMA case from its page, the RMA, SLA breach and facility event views. One simulated NVL72
// rack observed every 3 s; a quarantined device breaches its SLA after 2 s.
describe('day-2 operations in the web console (Chromium, full stack)', () => {
  const stack = new Stack({
    racks: 1,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 5, maximumAttempts: 2, settleTimeoutS: 60 },
    pollIntervalMs: 50,
    observe: { intervalS: 3, confirmations: 3 },
    remediation: { agent: { verifyTimeoutS: 5, verifyPollS: 1, acOffFloorS: 1, acPollS: 0.5 } },
    sla: { intervalS: 1, lifecycle: { quarantined: 2 } },
  });
  let browser: Browser;
  let web: Awaited<ReturnType<typeof consoleUrl>>;
  const computeTrays = () => stack.fleet!.devices.filter((d) => d.kind === 'compute');
  const idOf = (name: string) => stack.deviceIds.get(name)!;

  before(
    async () => {
      ensureBuilt();
      mkdirSync(screenshots, { recursive: true });
      await stack.start();
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

  const signedIn = (token: string) => signIn(browser, web.url, token);
  const health = (page: Page) => page.getByRole('region', { name: 'Health and quarantine' });

  /** Confirms a dialog that asks for a reason: its button waits for one. */
  async function confirmWithReason(page: Page, title: string, button: string, reason: string): Promise<void> {
    const dialog = page.getByRole('dialog', { name: title });
    await dialog.waitFor();
    const confirm = dialog.getByRole('button', { name: button, exact: true });
    assert.equal(await confirm.isDisabled(), true, `${title}: a reason is required`);
    await dialog.getByLabel(/^Reason/).fill(reason);
    await confirm.click();
    await dialog.waitFor({ state: 'hidden' });
  }

  /** Follows the job page the console opened after an action to its end, and goes back. */
  async function jobSucceeds(page: Page, kind: string): Promise<void> {
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    await page
      .getByRole('heading', { level: 1, name: new RegExp(`^${kind.replace('.', '\\.')} succeeded`) })
      .waitFor({ timeout: 60_000 });
    await page.goBack();
  }

  it(
    'a device shows its observed health; quarantined from its page it is held (and breaches its SLA), an RMA case ' +
      'opened there is shipped and taken back from the case page',
    { timeout: 240_000 },
    async () => {
      const tray = computeTrays()[0]!;
      const page = await signedIn(stack.tokens.operator);
      await page.goto(`${web.url}/devices/${idOf(tray.name)}`);
      await page.getByRole('heading', { level: 1, name: new RegExp(tray.name) }).waitFor();
      const region = health(page);
      await region.getByText('healthy', { exact: true }).waitFor({ timeout: 30_000 });
      await region.getByText(/^Not held: lifecycle discovered/).waitFor();
      assert.equal(await region.getByRole('button', { name: 'Release' }).count(), 0, 'nothing to release');
      await assertAccessible(page, 'device health');

      await region.getByRole('button', { name: 'Quarantine' }).click();
      await confirmWithReason(page, `Quarantine ${tray.name}?`, 'Quarantine', 'web e2e: coolant smell');
      await jobSucceeds(page, 'device.quarantine');
      await region.getByText(/^Held: quarantined since .* Quarantined: web e2e: coolant smell/).waitFor();
      await region.getByRole('button', { name: 'Release' }).waitFor();
      assert.equal(await region.getByRole('button', { name: 'Quarantine' }).count(), 0, 'held already');
      await snapshot(page, 'device-health');

      // Quarantined longer than its 2 s limit: an open breach, listed from the device's link.
      await region.getByRole('link', { name: 'SLA breaches of this device' }).click();
      await page.getByRole('heading', { level: 1, name: 'SLA breaches' }).waitFor();
      const breaches = page.getByRole('table', { name: 'SLA breaches, newest first (1)' });
      await breaches.waitFor({ timeout: 30_000 });
      const [breach] = await rowTexts(breaches);
      assert.equal(breach![0], `device ${tray.name} · ${stack.siteId}`);
      assert.deepEqual([breach![1], breach![2], breach![3]], ['lifecycle:quarantined', 'quarantined', '2 s']);
      assert.equal(breach![6], 'open');
      await assertAccessible(page, 'SLA breaches');
      await snapshot(page, 'sla-breaches');
      await page.goBack();

      await region.getByRole('button', { name: 'Open RMA case' }).click();
      const open = page.getByRole('dialog', { name: `Open an RMA case for ${tray.name}?` });
      await open.getByLabel(/^Failed part/).fill('GPU_1');
      await confirmWithReason(page, `Open an RMA case for ${tray.name}?`, 'Open RMA case', 'Xid 79 twice');
      await page.waitForURL(/\/rma\/[0-9a-f-]{36}$/);
      await page.getByRole('heading', { level: 1, name: 'RMA case GPU_1 open' }).waitFor();
      const history = page.getByRole('table', { name: 'Moves of the case, oldest first' });
      assert.deepEqual(
        (await rowTexts(history)).map((r) => r.slice(1, 4)),
        [['new → open', 'test-operator', 'Xid 79 twice']],
      );
      const actions = page.getByRole('group', { name: 'RMA actions' });
      assert.deepEqual(await actions.getByRole('button').allTextContents(), ['Mark shipped', 'Close case']);

      await actions.getByRole('button', { name: 'Mark shipped' }).click();
      await confirmWithReason(page, 'Move RMA case GPU_1 from open to shipped?', 'Mark shipped', 'picked up by DHL');
      await page.getByRole('heading', { level: 1, name: 'RMA case GPU_1 shipped' }).waitFor();
      const started = page.getByRole('status').filter({ hasText: /^Started device\.rma_ship / });
      await started.waitFor();
      await page.getByRole('form', { name: 'Vendor case' }).getByLabel('Vendor case id').fill('NV-4711');
      await page.getByRole('button', { name: 'Save vendor case' }).click();
      await page.getByText('NV-4711', { exact: true }).waitFor();
      await assertAccessible(page, 'RMA case');
      await snapshot(page, 'rma-case');

      // The ship job moves the device to rma (the agent's projection), then the return back to discovered.
      await page.getByRole('link', { name: `device ${idOf(tray.name).slice(0, 8)}` }).click();
      await region.getByText(/^Held: rma since .* ShippedToVendor: RMA [0-9a-f-]+: picked up by DHL/).waitFor({
        timeout: 60_000,
      });
      assert.equal(await region.getByRole('button', { name: 'Open RMA case' }).count(), 0, 'at the vendor');
      await page.goBack();
      await actions.getByRole('button', { name: 'Mark replaced' }).click();
      await confirmWithReason(page, 'Move RMA case GPU_1 from shipped to replaced?', 'Mark replaced', 'new GPU');
      await page.getByRole('heading', { level: 1, name: 'RMA case GPU_1 replaced' }).waitFor();
      assert.deepEqual(
        (await rowTexts(history)).map((r) => r[1]),
        ['new → open', 'open → shipped', 'shipped → replaced'],
      );
      assert.equal(await actions.getByRole('button').count(), 0, "revalidation is the enrolment's");

      // The list, filtered by state; the breach resolved once the device left quarantined.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'RMA', exact: true }).click();
      await page.getByLabel('State').selectOption('replaced');
      const cases = page.getByRole('table', { name: 'RMA cases, newest first (1)' });
      await cases.getByRole('link', { name: 'GPU_1' }).waitFor();
      await assertAccessible(page, 'RMA cases');
      await snapshot(page, 'rma');
      await page.getByLabel('State').selectOption('open');
      await page.getByText('No RMA case matches.').waitFor();

      await page.goto(`${web.url}/devices/${idOf(tray.name)}`);
      await region.getByText(/^Not held: lifecycle discovered/).waitFor({ timeout: 60_000 });
      await page.goto(`${web.url}/sla?status=resolved`);
      const resolved = page.getByRole('table', { name: /^SLA breaches, newest first/ });
      await resolved.getByText(/^resolved cleared/).waitFor({ timeout: 30_000 });
      await page.context().close();
    },
  );

  it(
    'a GPU fault shows on the device page, the rule holds it and its remediation opens an RMA case; fixed, the ' +
      'device is released from its page',
    { timeout: 240_000 },
    async () => {
      const tray = computeTrays()[1]!;
      const faults = `${stack.simAdminUrl}/bmcs/${tray.name}/health/faults`;
      const injected = await fetch(faults, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ part: 'gpu', gpu: 1, offBus: true }),
      });
      assert.equal(injected.status, 200, await injected.text());
      const page = await signedIn(stack.tokens.operator);
      await page.goto(`${web.url}/devices/${idOf(tray.name)}`);
      const region = health(page);
      const table = region.getByRole('table', { name: 'Faults' });
      await table.waitFor({ timeout: 60_000 });
      const [fault] = await rowTexts(table);
      assert.deepEqual([fault![0], fault![2]], ['gpu', 'Critical']);
      await region.getByText('faulty', { exact: true }).waitFor();
      await region.getByText(/^Held: (quarantined|remediating) /).waitFor({ timeout: 60_000 });

      // The playbook cannot clear a GPU off the bus: the remediation opens a case and leaves the device held.
      await region.getByRole('link', { name: 'RMA cases of this device' }).click();
      const cases = page.getByRole('table', { name: 'RMA cases, newest first (1)' });
      await cases.getByText(/by remediation$/).waitFor({ timeout: 150_000 });
      await page.goBack();
      await region.getByText(/^Held: quarantined since /).waitFor({ timeout: 30_000 });

      assert.ok((await fetch(faults, { method: 'DELETE' })).ok, 'the fault is cleared');
      await region.getByRole('button', { name: 'Release' }).click();
      await confirmWithReason(page, `Release ${tray.name}?`, 'Release', 'reseated GPU_1');
      await jobSucceeds(page, 'device.release');
      await region.getByText(/^Not held: lifecycle discovered/).waitFor({ timeout: 60_000 });
      await page.context().close();
    },
  );

  it(
    'facility events are listed and filtered; a viewer sees them and device health without controls, an operator ' +
      'rejects a power-off that waits',
    { timeout: 180_000 },
    async () => {
      const bms = (await createApiToken(stack.dbHandle.db, 'bms-hall-1', 'facility')).token;
      const rackId = stack.rackIds.get('r001')!;
      const post = (body: object) => stack.api('POST', '/v1/facility-events', body, bms);
      const cooling = await post({
        external_id: 'bms-1',
        kind: 'cooling',
        severity: 'info',
        rack_ids: [rackId],
        message: 'CRAH 2 filter due',
      });
      assert.equal(cooling.status, 201, JSON.stringify(cooling.body));
      const leak = await post({
        external_id: 'bms-2',
        kind: 'leak',
        severity: 'warning',
        rack_ids: [rackId],
        location: 'row 12',
        message: 'drip tray wet',
      });
      assert.equal(leak.status, 201, JSON.stringify(leak.body));

      const viewer = await signedIn(stack.tokens.viewer);
      await viewer
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Facility', exact: true })
        .click();
      await viewer.getByRole('heading', { level: 1, name: 'Facility events' }).waitFor();
      const all = viewer.getByRole('table', { name: 'Facility events, newest first (2)' });
      await all.waitFor();
      // The rack's name arrives with its own query; until then the cell shows the id's first characters.
      await all.getByText('r001').first().waitFor();
      const rows = await rowTexts(all);
      assert.deepEqual(
        rows.map((r) => [r[1], r[2], r[3], r[4]]),
        [
          ['leak', 'warning', 'awaiting_approval', 'r001row 12'],
          ['cooling', 'info', 'recorded', 'r001'],
        ],
      );
      assert.equal(await viewer.getByRole('button', { name: /power-off/ }).count(), 0, 'a viewer decides nothing');
      await viewer.getByLabel('Kind').selectOption('cooling');
      await viewer
        .getByRole('table', { name: 'Facility events, newest first (1)' })
        .getByText('CRAH 2 filter due')
        .waitFor();
      await assertAccessible(viewer, 'facility events');

      const held = computeTrays()[2]!;
      await viewer.goto(`${web.url}/devices/${idOf(held.name)}`);
      await health(viewer)
        .getByText(/^Held: quarantined .*facility event/)
        .waitFor({ timeout: 60_000 });
      assert.equal(await viewer.getByRole('group', { name: 'Quarantine actions' }).count(), 0);
      await viewer.context().close();

      const operator = await signedIn(stack.tokens.operator);
      await operator.goto(`${web.url}/facility?state=awaiting_approval`);
      const waiting = operator.getByRole('table', { name: 'Facility events, newest first (1)' });
      await waiting.waitFor();
      await snapshot(operator, 'facility-events');
      await waiting.getByRole('button', { name: 'Reject power-off' }).click();
      await confirmWithReason(operator, 'Leave the racks of the leak event on?', 'Reject power-off', 'tray dry');
      await operator.getByText('No facility event matches.').waitFor();
      await operator.getByLabel('State').selectOption('rejected');
      await operator
        .getByRole('table', { name: 'Facility events, newest first (1)' })
        .getByText('rejected by test-operator: tray dry')
        .waitFor();
      await operator.context().close();
    },
  );
});
