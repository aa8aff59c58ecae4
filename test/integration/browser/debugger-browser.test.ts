/**
 * The debugger page in a real browser (Debian's chromium, driven by playwright-core): sign in,
 * watch a turn's calls arrive with status and result, drop the socket, and see the list resume
 * without a gap or a duplicate. Skipped, with the reason printed, when no Chromium is installed.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, CRM_TOOLS, type World } from '../../support/turns.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const found = existsSync(CHROMIUM);
if (!found) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);

let t: TestApp;
let peer: SdkServerHandle;
let w: World;
let browser: Browser;

describe.skipIf(!found)('the debugger page in Chromium', () => {
  beforeAll(async () => {
    t = await startTestApp();
    peer = await startSdkServer({ stateful: false, json: false, tools: CRM_TOOLS });
    w = await buildWorld(t, peer.url, 'CRM');
    await connectTools(t, w);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await peer?.close();
  });

  it('should show calls live with status and result, and resume after a dropped socket', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    const origin = new URL(t.url).origin;
    await page.goto(`${origin}/debugger`);
    await page.fill('#token', w.customer);
    await page.click('button[type=submit]');
    await page.waitForSelector('#conn.on', { timeout: 10_000 });

    const turn = await begin(t, w, 'browser-1');
    await call(t, w, turn.turnId, 'crm__lookup', { email: 'ann@example.com' });
    await call(t, w, turn.turnId, 'crm__update', { email: 'ann@example.com', plan: 'pro' });
    await call(t, w, turn.turnId, 'crm__fails');
    await page.waitForSelector('.call[data-status=TOOL_ERROR]', { timeout: 10_000 });
    const statuses = await page.$$eval('.call', (els) =>
      els.map((e) => (e as unknown as { dataset: Record<string, string> }).dataset.status),
    );
    expect(statuses).toEqual(['SUCCEEDED', 'SUCCEEDED', 'TOOL_ERROR']);
    expect(await page.textContent('.call[data-seq="1"]')).toContain('ann@example.com');

    // Drop the socket; calls made meanwhile appear once, in order.
    await page.evaluate(() =>
      (globalThis as unknown as { ctDebugger: { dropSocket(): void } }).ctDebugger.dropSocket(),
    );
    await call(t, w, turn.turnId, 'crm__lookup', { email: 'bob@example.com' });
    await call(t, w, turn.turnId, 'crm__lookup', { email: 'cy@example.com' });
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
        ).document.querySelectorAll('.call').length >= 5,
      undefined,
      {
        timeout: 15_000,
      },
    );
    await page.waitForSelector('.call[data-seq="5"][data-status=SUCCEEDED]', { timeout: 10_000 });
    const seqs = await page.$$eval('.call', (els) =>
      els.map((e) => Number((e as unknown as { dataset: Record<string, string> }).dataset.seq)),
    );
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    if (process.env.DEBUGGER_SCREENSHOT) await page.screenshot({ path: process.env.DEBUGGER_SCREENSHOT });
  });
});
