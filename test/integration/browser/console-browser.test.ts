/**
 * The ops console page in a real browser (Debian's chromium, driven by playwright-core), issue 28:
 * connect a test MCP server, change a tool's schema, re-discover from the page, see the diff in the
 * review queue (breaking entries marked, the risk change in words), approve it and see the
 * operation on; flip the incident switch and see the next beginTurn without the tool; an OPERATOR
 * sees the queue but cannot decide, and the page says why. Screenshots are saved as artifacts of
 * the run, outside the repository (ARTIFACTS_DIR, default the system's temporary folder). Skipped,
 * with the reason printed, when no Chromium is installed.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../../support/browser.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';

const ARTIFACTS = process.env.ARTIFACTS_DIR ?? join(tmpdir(), 'connected-tools-artifacts');

const read = { readOnlyHint: true };
const v1: PeerTool[] = [
  {
    name: 'lookup',
    description: 'Look a customer up',
    inputSchema: { email: z.string() },
    annotations: read,
  },
  { name: 'report', description: 'A report', annotations: read },
];
const v2: PeerTool[] = [
  {
    name: 'lookup',
    description: 'Look a customer up',
    inputSchema: { email: z.string(), region: z.string() },
    annotations: read,
  },
  // Annotations that raise the risk: held too, and stays in the queue for the operator's view.
  { name: 'report', description: 'A report', annotations: { readOnlyHint: true, destructiveHint: true } },
];

let t: TestApp;
let peer: SdkServerHandle;
let w: World;
let browser: Browser;

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${new URL(t.url).origin}/console`);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForSelector('body[data-loaded]', { timeout: 10_000 });
}

/** Waits for the next full load of the page's data after `action`. */
async function reloaded(page: Page, action: () => Promise<void>): Promise<void> {
  const before = await page.getAttribute('body', 'data-loaded');
  await action();
  await page.waitForFunction(
    (b) =>
      (globalThis as unknown as { document: { body: { dataset: { loaded?: string } } } }).document.body
        .dataset.loaded !== b,
    before,
    { timeout: 10_000 },
  );
}

describe.skipIf(!hasChromium)('the ops console page in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // A database of its own: the page shows the whole review queue, which other test files would fill.
    t = await startTestApp({ databaseUrl: await createEmptyDatabase() });
    peer = await startSdkServer({ stateful: false, json: true, tools: v1 });
    w = await buildWorld(t, peer.url, 'CRM');
    await connectTools(t, w);
    const turn = await begin(t, w, 'console-1');
    await call(t, w, turn.turnId, 'crm__lookup', { email: 'ann@example.com' });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await peer?.close();
  });

  it('should show a re-discovered change as a diff, approve it, and switch the tool off for the next turn', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await signIn(page, w.admin);
    const row = page.locator('#connections tr[data-connection="CRM"]');
    await expect.poll(() => row.textContent()).toContain('READY');
    await reloaded(page, () => row.locator('button.open').click());
    expect(await page.locator('#operations tr[data-operation="lookup"]').getAttribute('data-enabled')).toBe(
      'true',
    );
    expect(await page.locator('#operations tr[data-operation="lookup"] svg.chart rect.calls').count()).toBe(
      1,
    );

    peer.setTools(v2);
    await reloaded(page, () => page.locator('button.rediscover').click());
    const card = page.locator('.review[data-key="connector.crm.lookup"]');
    await card.waitFor({ timeout: 10_000 });
    const breaking = card.locator('tr.breaking');
    expect(await breaking.getAttribute('data-path')).toBe('inputSchema.properties.region.required');
    expect(await breaking.locator('.badge').textContent()).toBe('breaking');
    expect(
      await card.locator('tr[data-path="inputSchema.properties.region"] pre.after').textContent(),
    ).toContain('"type": "string"');
    expect(await card.locator('.risk').textContent()).toBe('The risk stays as it was.');
    const report = page.locator('.review[data-key="connector.crm.report"]');
    expect(await report.locator('.risk').textContent()).toContain('The risk goes up from READ to WRITE');
    expect(await page.locator('#operations tr[data-operation="lookup"]').getAttribute('data-enabled')).toBe(
      'false',
    );
    await page.screenshot({ path: join(ARTIFACTS, 'console-review.png'), fullPage: true });
    if (process.env.CONSOLE_SCREENSHOT)
      await page.screenshot({ path: process.env.CONSOLE_SCREENSHOT, fullPage: true });

    await reloaded(page, () => card.locator('button.approve').click());
    await card.waitFor({ state: 'detached', timeout: 10_000 });
    const lookup = page.locator('#operations tr[data-operation="lookup"]');
    expect(await lookup.getAttribute('data-enabled')).toBe('true');
    let tools = (await begin(t, w, 'console-2')).tools.map((tool) => tool.name);
    expect(tools).toContain('crm__lookup');

    await reloaded(page, () => lookup.locator('button.switch').click());
    expect(await lookup.getAttribute('data-enabled')).toBe('false');
    tools = (await begin(t, w, 'console-3')).tools.map((tool) => tool.name);
    expect(tools).not.toContain('crm__lookup');
    await page.screenshot({ path: join(ARTIFACTS, 'console-switched-off.png'), fullPage: true });
    expect(problems).toEqual([]);
  });

  it('should show an operator the queue, with the decisions off and why', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, w.operator);
    const card = page.locator('.review[data-key="connector.crm.report"]');
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator('button.approve').isDisabled()).toBe(true);
    expect(await card.locator('button.reject').isDisabled()).toBe(true);
    expect(await page.locator('#queue-note').textContent()).toContain('only an ADMIN can approve or reject');
    await page.screenshot({ path: join(ARTIFACTS, 'console-operator.png'), fullPage: true });
  });

  it('should serve the page under the strict CSP', async () => {
    const res = await fetch(`${new URL(t.url).origin}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});
