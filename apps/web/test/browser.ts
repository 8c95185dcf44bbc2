import assert from 'node:assert/strict';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { repoRoot } from '../../../tools/lib/processes.js';

// What the console's browser tests share: the browser, the accessibility check, screenshots and table reading.

export const screenshots = join(repoRoot, 'docs', 'screenshots');

/** Debian's chromium, headless, quiet (no network of its own), in the fresh profile Playwright makes per launch. */
export function launch(): Promise<Browser> {
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
export async function assertAccessible(page: Page, view: string): Promise<void> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    [],
    `${view}: accessibility violations`,
  );
}

export async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function snapshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

/** The rows of a table's body, each as its cells' text. */
export function rowTexts(table: Locator): Promise<string[][]> {
  return table
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.textContent?.trim() ?? '')));
}

/** A new browser context (own session storage) on the console at `url`, signed in with `token`. */
export async function signIn(browser: Browser, url: string, token: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
  return page;
}
