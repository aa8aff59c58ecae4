/**
 * The debugger page in a real browser (Debian's chromium, driven by playwright-core): sign in,
 * watch a turn's calls arrive (a READ, a WRITE, a failing call, and a long call whose server sends
 * progress) with status and result, see the progress lines while the long call runs, drop the
 * socket, and see the list resume without a gap or a duplicate; and a turn declared for a model
 * API (issue 26): its left-out tools with why, and a call's arguments as the model wrote them beside
 * the canonical ones, hostile text shown as text. Skipped, with the reason printed, when no
 * Chromium is installed.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, signInToDebugger } from '../../support/browser.js';
import { z } from 'zod';
import { CreateAssistantDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import {
  startSdkServer,
  type PeerExtra,
  type PeerTool,
  type SdkServerHandle,
} from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';
import type { JsonObject } from '../../../src/operations/types.js';
import { compileSchema } from '../../../src/turns/dialects/compile.js';
import { encodeArguments } from '../../support/dialect-roundtrip.js';
import {
  HARD_TOOLS,
  startHardSchemaServer,
  type HardSchemaServerHandle,
  type HardTool,
} from '../../support/hard-schema-server.js';

/** The long call waits here after its first progress line, until the test has seen it on the page. */
let release: () => void = () => undefined;
const released = new Promise<void>((r) => (release = r));

async function progress(extra: PeerExtra, step: number, total: number) {
  await extra.sendNotification({
    method: 'notifications/progress',
    params: {
      progressToken: extra._meta!.progressToken!,
      progress: step,
      total,
      message: `step ${step} of ${total}`,
    },
  });
}

const TOOLS: PeerTool[] = [
  {
    name: 'lookup',
    description: 'Look a customer up',
    inputSchema: { email: z.string() },
    annotations: { readOnlyHint: true },
    handler: (args) => ({
      content: [{ type: 'text', text: `found ${String(args.email)}` }],
      structuredContent: { plan: 'pro' },
    }),
  },
  {
    name: 'update',
    description: 'Update a customer',
    inputSchema: { email: z.string(), plan: z.string() },
    annotations: { idempotentHint: false },
    handler: (args) => ({ content: [{ type: 'text', text: `plan set to ${String(args.plan)}` }] }),
  },
  {
    name: 'fails',
    description: 'Always reports an error',
    annotations: { readOnlyHint: true },
    handler: () => ({ isError: true, content: [{ type: 'text', text: 'customer not found' }] }),
  },
  {
    name: 'long_job',
    description: 'Works in steps and says how far it got',
    annotations: { readOnlyHint: true },
    handler: async (_args, extra) => {
      await progress(extra, 1, 3);
      await released;
      for (const step of [2, 3]) await progress(extra, step, 3);
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', logger: 'job', data: 'all steps done' },
      });
      return { content: [{ type: 'text', text: 'report ready' }] };
    },
  },
];

type Doc = { document: { querySelectorAll(s: string): ArrayLike<{ dataset: Record<string, string> }> } };

/** seq and status of every call on the page, in page order. */
function calls(page: Page): Promise<[number, string][]> {
  return page.evaluate(() =>
    Array.from((globalThis as unknown as Doc).document.querySelectorAll('.call')).map(
      (e) => [Number(e.dataset.seq), e.dataset.status ?? ''] as [number, string],
    ),
  );
}

/** The text of a call's block (arguments or result), opened first: blocks are filled when opened. */
async function opened(call: Locator, title: 'arguments' | 'result'): Promise<string> {
  const block = call.locator('details', { has: call.page().locator('summary', { hasText: title }) });
  if (!(await block.evaluate((d) => (d as unknown as { open: boolean }).open)))
    await block.locator('summary').click();
  await block.locator('pre').waitFor();
  return (await block.textContent()) ?? '';
}

/** A property name a hostile tool server might declare: it must reach the page as text only. */
const HOSTILE_KEY = '<img src=x onerror="window.__xss=1">';
const ODD = HARD_TOOLS.find((h) => h.name === 'query_odd_names')!;
const ODD_HOSTILE: HardTool = {
  ...ODD,
  inputSchema: {
    ...ODD.inputSchema,
    properties: { ...(ODD.inputSchema.properties as JsonObject), [HOSTILE_KEY]: { type: 'string' } },
  },
};
const WIDE = HARD_TOOLS.find((h) => h.name === 'wide_report')!;

/** The text of a block whose summary is exactly `title`, opened first. */
async function openedExactly(call: Locator, title: string): Promise<string> {
  const summary = call.page().locator('summary', { hasText: new RegExp(`^${title}$`) });
  const block = call.locator('details', { has: summary });
  if (!(await block.evaluate((d) => (d as unknown as { open: boolean }).open)))
    await block.locator('summary').click();
  await block.locator('pre').waitFor();
  return (await block.locator('pre').textContent()) ?? '';
}

let t: TestApp;
let peer: SdkServerHandle;
let hard: HardSchemaServerHandle | undefined;
let w: World;
let browser: Browser;

describe.skipIf(!hasChromium)('the debugger page in Chromium', () => {
  beforeAll(async () => {
    // Every progress line goes out live as it arrives (the 0.2 s throttle is the unit test's, in
    // test/unit/turns/progress.test.ts), so the order comes from the gate above, not from sleeps.
    t = await startTestApp({ env: { PROGRESS_INTERVAL_MS: '0' } });
    peer = await startSdkServer({ stateful: false, json: false, tools: TOOLS });
    w = await buildWorld(t, peer.url, 'CRM', 30_000);
    await connectTools(t, w);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    release();
    await browser?.close();
    await t?.stop();
    await peer?.close();
    await hard?.close();
  });

  it('should show each call live with status, result and progress, and resume after a dropped socket', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await signInToDebugger(page, t.url, w.customer);
    await page.waitForSelector('#conn.on', { timeout: 10_000 });

    const turn = await begin(t, w, 'browser-1');
    await call(t, w, turn.turnId, 'crm__lookup', { email: 'ann@example.com' });
    await call(t, w, turn.turnId, 'crm__update', { email: 'ann@example.com', plan: 'pro' });
    await call(t, w, turn.turnId, 'crm__fails');
    await page.waitForSelector('.call[data-status=TOOL_ERROR]', { timeout: 10_000 });
    expect(await calls(page)).toEqual([
      [1, 'SUCCEEDED'],
      [2, 'SUCCEEDED'],
      [3, 'TOOL_ERROR'],
    ]);
    const read = page.locator('.call[data-seq="1"]');
    expect(await read.textContent()).not.toContain('ann@example.com'); // closed blocks hold no text
    expect(await opened(read, 'arguments')).toContain('ann@example.com');
    expect(await opened(read, 'result')).toContain('found ann@example.com');
    expect(await opened(read, 'result')).toContain('"plan": "pro"');
    const write = page.locator('.call[data-seq="2"]');
    expect(await opened(write, 'result')).toContain('plan set to pro');
    expect(await page.locator('.call[data-seq="3"]').textContent()).toContain('customer not found');

    // The long call: its first progress line is on screen while it is still running.
    const long = call(t, w, turn.turnId, 'crm__long_job');
    const running = page.locator('.call[data-seq="4"][data-status=RUNNING]');
    await running
      .locator('.progress li', { hasText: 'progress 1/3 — step 1 of 3' })
      .waitFor({ timeout: 10_000 });
    expect(await running.textContent()).not.toContain('report ready');
    // A block the person opens stays open while the call is updated.
    await running.locator('summary', { hasText: 'arguments' }).click();
    release();
    await long;
    const finished = page.locator('.call[data-seq="4"][data-status=SUCCEEDED]');
    await finished.waitFor({ timeout: 10_000 });
    const lines = await finished.locator('.progress li').allTextContents();
    expect(lines.map((l) => l.replace(/^\+\d+ ms\s+/, ''))).toEqual([
      'progress 1/3 — step 1 of 3',
      'progress 2/3 — step 2 of 3',
      'progress 3/3 — step 3 of 3',
      'info: job: all steps done',
    ]);
    expect(await finished.locator('details[open] summary').allTextContents()).toEqual(['arguments']);
    expect(await opened(finished, 'result')).toContain('report ready');
    await opened(page.locator('.call[data-seq="2"]'), 'arguments'); // for the screenshot
    if (process.env.DEBUGGER_SCREENSHOT)
      await page.screenshot({ path: process.env.DEBUGGER_SCREENSHOT, fullPage: true });

    // Drop the socket; calls made meanwhile appear once, in order, after the ones already there.
    await page.evaluate(() =>
      (globalThis as unknown as { ctDebugger: { dropSocket(): void } }).ctDebugger.dropSocket(),
    );
    await call(t, w, turn.turnId, 'crm__lookup', { email: 'bob@example.com' });
    await call(t, w, turn.turnId, 'crm__lookup', { email: 'cy@example.com' });
    await page.waitForSelector('.call[data-seq="6"][data-status=SUCCEEDED]', { timeout: 15_000 });
    await page.waitForSelector('#conn.on', { timeout: 10_000 });
    expect(await calls(page)).toEqual([
      [1, 'SUCCEEDED'],
      [2, 'SUCCEEDED'],
      [3, 'TOOL_ERROR'],
      [4, 'SUCCEEDED'],
      [5, 'SUCCEEDED'],
      [6, 'SUCCEEDED'],
    ]);
    // No progress line was shown twice by the replay either.
    expect(await page.locator('.call[data-seq="4"] .progress li').count()).toBe(4);
    expect(await opened(page.locator('.call[data-seq="6"]'), 'arguments')).toContain('cy@example.com');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('should show a dialect turn’s left-out tools and a call’s model arguments beside the canonical ones, as text', async () => {
    hard = await startHardSchemaServer({ tools: [ODD_HOSTILE, WIDE] });
    const hw = await buildWorld(t, hard.url, 'Hard', 30_000);
    await connectTools(t, hw);
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('dialog', (d) => {
      problems.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    await signInToDebugger(page, t.url, hw.customer);
    await page.waitForSelector('#conn.on', { timeout: 10_000 });

    const begun = await t.ok<{ beginTurn: { turnId: string; leftOut: { name: string }[] } }, unknown>(
      'mutation($input: BeginTurnInput!) { beginTurn(input: $input) { turnId leftOut { name } } }',
      { input: { assistantId: hw.assistantId, conversationId: 'browser-strict', dialect: 'OPENAI_STRICT' } },
      hw.runtime,
    );
    expect(begun.beginTurn.leftOut.map((l) => l.name)).toEqual(['hard__wide_report']);
    const compiled = compileSchema('OPENAI_STRICT', ODD_HOSTILE.inputSchema);
    if (!compiled.ok) throw new Error(compiled.reason);
    const canonical: JsonObject = {
      'filter.name': '<script>window.__xss=2</script>',
      'page size': 10,
      [HOSTILE_KEY]: '<b>not bold</b>',
    };
    const written = encodeArguments(compiled.shape, canonical, true) as JsonObject;
    expect(Object.keys(written)).not.toContain('page size');
    const res = await call(t, hw, begun.beginTurn.turnId, 'hard__query_odd_names', written);
    expect(res).toMatchObject({ ok: true, status: 'SUCCEEDED' });

    const turn = page.locator('section.turn', { hasText: 'Conversation browser-strict' });
    await turn.waitFor({ timeout: 10_000 });
    expect(await turn.locator('h2 .dialect').textContent()).toBe('OPENAI_STRICT');
    const left = turn.locator('details.left-out');
    expect(await left.locator('summary').textContent()).toBe('left out (1)');
    await left.locator('summary').click();
    const item = left.locator('li');
    expect(await item.count()).toBe(1);
    expect(await item.locator('.name').textContent()).toBe('hard__wide_report');
    expect(await item.locator('.key').textContent()).toBe(hw.ops.wide_report!.key);
    expect(await item.locator('.reason').textContent()).toMatch(
      /^SCHEMA_TOO_LARGE: its input schema has 6060 properties, over the limit of 5000$/,
    );

    const done = turn.locator('.call[data-seq="1"][data-status=SUCCEEDED]');
    await done.waitFor({ timeout: 10_000 });
    const sent = JSON.parse(await openedExactly(done, 'arguments')) as JsonObject;
    expect(sent).toEqual(canonical);
    const modelWrote = JSON.parse(await openedExactly(done, 'model arguments')) as JsonObject;
    expect(modelWrote).toEqual(written);
    // Hostile names and values are text on the page, never markup.
    expect(await page.locator('.call img, .call script, .call b').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss)).toBeUndefined();
    if (process.env.DEBUGGER_SCREENSHOT)
      await page.screenshot({
        path: process.env.DEBUGGER_SCREENSHOT.replace(/(\.png)?$/, '-dialect.png'),
        fullPage: true,
      });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('should page through more than 100 assistants and find one by name', async () => {
    for (let i = 1; i <= 149; i++) {
      const name = `Extra assistant ${String(i).padStart(3, '0')}`;
      await t.ok(CreateAssistantDocument, { input: { workspaceId: w.workspaceId, name } }, w.admin);
    }
    const page = await browser.newPage({ viewport: { width: 1300, height: 700 } });
    await signInToDebugger(page, t.url, w.customer);
    await page.waitForSelector('#conn.on', { timeout: 10_000 });
    const options = () => page.locator('#assistant option').count();
    expect(await options()).toBe(100);
    await page.click('#assistant-more');
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
        ).document.querySelectorAll('#assistant option').length === 150,
    );
    expect(await page.isHidden('#assistant-more')).toBe(true);

    // On a fresh page, the find box reads further pages until it finds the one asked for.
    const fresh = await browser.newPage();
    await signInToDebugger(fresh, t.url, w.customer);
    await fresh.waitForSelector('#conn.on', { timeout: 10_000 });
    await fresh.fill('#assistant-find', 'assistant 149');
    await fresh.waitForFunction(() => {
      const d = (
        globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }
      ).document;
      return d.querySelector('#assistant option:checked')?.textContent === 'Extra assistant 149';
    });
    expect(await fresh.locator('#assistant option').count()).toBe(1);
    await page.close();
    await fresh.close();
  });
});
