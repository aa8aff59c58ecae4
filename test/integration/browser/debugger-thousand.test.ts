/**
 * The debugger page with a thousand calls on screen, in Chromium: how long the page takes to show
 * 1,000 calls arriving live and on replay, and how fast the conversation filter and scrolling
 * answer. Bounds are generous (the machine is shared); the numbers are printed for the record.
 * Skipped, with the reason printed, when no Chromium is installed.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, signInToDebugger } from '../../support/browser.js';
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

type Win = {
  document: { querySelectorAll(s: string): { length: number } };
  performance: { now(): number };
  requestAnimationFrame(cb: () => void): void;
};

/** Milliseconds (page clock) until `selector` matches `count` elements and a frame was painted. */
function shown(page: Page, selector: string, count: number, timeout = 60_000): Promise<number> {
  return page.evaluate(
    ({ selector, count, timeout }) =>
      new Promise<number>((resolve, reject) => {
        const w = globalThis as unknown as Win;
        const start = w.performance.now();
        const check = () => {
          if (w.document.querySelectorAll(selector).length === count)
            return w.requestAnimationFrame(() => resolve(w.performance.now() - start));
          if (w.performance.now() - start > timeout)
            return reject(new Error(`${selector} never reached ${count}`));
          setTimeout(check, 10);
        };
        check();
      }),
    { selector, count, timeout },
  );
}

/** Time (page clock) for one scroll to the bottom and back to be painted. */
function scrollFrame(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const w = globalThis as unknown as Win & {
          scrollTo(x: number, y: number): void;
          document: { body: { scrollHeight: number } };
        };
        const start = w.performance.now();
        w.scrollTo(0, w.document.body.scrollHeight);
        w.requestAnimationFrame(() => {
          w.scrollTo(0, w.document.body.scrollHeight / 2);
          w.requestAnimationFrame(() => resolve(w.performance.now() - start));
        });
      }),
  );
}

/** Adds up main-thread tasks over 50 ms (long tasks): the page must stay responsive. */
function busyMeter(): void {
  const g = globalThis as unknown as {
    __busy: number;
    PerformanceObserver: new (cb: (l: { getEntries(): { duration: number }[] }) => void) => {
      observe(o: object): void;
    };
  };
  g.__busy = 0;
  new g.PerformanceObserver((list) => {
    for (const e of list.getEntries()) g.__busy += e.duration;
  }).observe({ type: 'longtask' });
}

const busy = (page: Page) => page.evaluate(() => (globalThis as unknown as { __busy: number }).__busy);

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

  it('should keep up with 1,000 calls live, replay them, and filter and scroll quickly', async () => {
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
    // Generous bounds: the page must keep up, not win a race on a busy machine.
    expect(live).toBeLessThan(5_000);
    expect(replay).toBeLessThan(15_000);
    expect(filter).toBeLessThan(5_000);
    expect(unfilter).toBeLessThan(15_000);
    expect(scroll).toBeLessThan(1_000);
    await page.close();
    await again.close();
  }, 180_000);
});
