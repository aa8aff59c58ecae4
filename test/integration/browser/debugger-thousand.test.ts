/**
 * The debugger page with a thousand calls on screen, in Chromium: all 1,000 calls arrive live and
 * on replay, the conversation filter narrows to one conversation's hundred and back, and the page
 * scrolls. How fast, against the same page with ten calls in the same run, is measured by
 * `npm run bench -- debugger`; the numbers are printed here for the record only.
 * Skipped, with the reason printed, when no Chromium is installed.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, signInToDebugger } from '../../support/browser.js';
import { busy, busyMeter, scrollFrame, shown } from '../../support/debugger-page.js';
import { z } from 'zod';
import { startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';

const TURNS = 10;
const CALLS_PER_TURN = 100;
const TOTAL = TURNS * CALLS_PER_TURN;

const TOOLS: PeerTool[] = [
  {
    name: 'lookup',
    description: 'Look a customer up',
    inputSchema: { n: z.number() },
    annotations: { readOnlyHint: true },
    handler: (args) => ({
      content: [{ type: 'text', text: `customer ${String(args.n)}: plan pro, 3 seats` }],
      structuredContent: { n: args.n, plan: 'pro', seats: 3 },
    }),
  },
];

async function signIn(page: Page, t: TestApp, token: string): Promise<void> {
  await page.addInitScript(busyMeter);
  await signInToDebugger(page, t.url, token);
}

let t: TestApp;
let peer: SdkServerHandle;
let w: World;
let browser: Browser;

describe.skipIf(!hasChromium)('the debugger page with a thousand calls', () => {
  beforeAll(async () => {
    t = await startTestApp();
    peer = await startSdkServer({ stateful: false, json: true, tools: TOOLS, record: false });
    w = await buildWorld(t, peer.url, 'CRM');
    await connectTools(t, w);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await peer?.close();
  });

  it('should show 1,000 calls live and on replay, filter them to one conversation and back, and scroll', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await signIn(page, t, w.customer);
    await page.waitForSelector('#conn.on', { timeout: 10_000 });
    // Ten conversations of a hundred calls each, made ten at a time.
    const started = Date.now();
    await Promise.all(
      Array.from({ length: TURNS }, async (_, i) => {
        const turn = await begin(t, w, `conv-${i}`);
        for (let n = 0; n < CALLS_PER_TURN; n++)
          await call(t, w, turn.turnId, 'crm__lookup', { n: i * 1000 + n });
      }),
    );
    const made = Date.now() - started;
    const live = await shown(page, '.call[data-status=SUCCEEDED]', TOTAL);
    const liveBusy = await busy(page);

    // Replay: a fresh page reads the stored events of all 1,000 calls.
    const again = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await signIn(again, t, w.customer);
    const replay = await shown(again, '.call[data-status=SUCCEEDED]', TOTAL);
    const replayBusy = await busy(again);

    // The conversation filter narrows to one conversation's hundred calls.
    await again.fill('#conversation', 'conv-3');
    const visible = '.turn:not([hidden]) .call';
    const filter = await shown(again, visible, CALLS_PER_TURN);
    expect(await again.textContent('#count')).toBe(`${TOTAL} calls, ${CALLS_PER_TURN} shown`);
    await again.fill('#conversation', '');
    const unfilter = await shown(again, visible, TOTAL);
    const scroll = await scrollFrame(again);

    const ms = (n: number) => `${Math.round(n)} ms`;
    console.log(
      `debugger with ${TOTAL} calls: made in ${ms(made)}; live: on screen ${ms(live)} after the last call answered, ` +
        `${ms(liveBusy)} of long tasks while they arrived; replay ${ms(replay)} (sign-in to all shown, ${ms(replayBusy)} of long tasks); ` +
        `filter to ${CALLS_PER_TURN} ${ms(filter)}, back to ${TOTAL} ${ms(unfilter)}; scroll ${ms(scroll)}`,
    );
    await page.close();
    await again.close();
  }, 180_000);
});
