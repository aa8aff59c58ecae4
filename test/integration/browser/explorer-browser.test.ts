/**
 * The explorer (GraphiQL at GET /graphql) in a real browser: served locally, the Authorization
 * header prefilled from the debugger page's sign-in, a query answered with it, a subscription over
 * graphql-ws. Skipped, with the reason printed, when no Chromium is installed.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, signInToDebugger } from '../../support/browser.js';
import {
  BeginTurnDocument,
  CreateAssistantDocument,
  CreateWorkspaceDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';

let t: TestApp;
let browser: Browser;
let origin: string;

type Doc = { document: { querySelector(s: string): { textContent: string } | null } };
type Cm = { document: { querySelector(s: string): { CodeMirror: { setValue(v: string): void } } } };

/** Puts a document in GraphiQL's query editor (CodeMirror 5). */
async function setQuery(page: Page, query: string): Promise<void> {
  await page.evaluate(
    (q) =>
      (globalThis as unknown as Cm).document
        .querySelector('.graphiql-query-editor .CodeMirror')
        .CodeMirror.setValue(q),
    query,
  );
}

/** The text of GraphiQL's result pane once it holds `marker`. */
async function resultWith(page: Page, marker: string): Promise<string> {
  await page.waitForFunction(
    (m) =>
      ((globalThis as unknown as Doc).document.querySelector('.result-window')?.textContent ?? '').includes(
        m,
      ),
    marker,
    { timeout: 20_000 },
  );
  return (await page.textContent('.result-window')) ?? '';
}

describe.skipIf(!hasChromium)('the explorer in Chromium', () => {
  beforeAll(async () => {
    t = await startTestApp();
    origin = new URL(t.url).origin;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('should run a query with the token from the debugger sign-in, prefilled', async () => {
    const token = await t.token(Role.ADMIN, null, 'explorer admin');
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    // Sign in on the debugger page, then open the explorer in the same tab.
    await signInToDebugger(page, t.url, token);
    await page.waitForSelector('#pick:not([hidden])');
    await page.click('a#explorer');
    await page.waitForURL(`${origin}/graphql`);
    await page.waitForSelector('.graphiql-container', { timeout: 20_000 });

    const headers = await page.textContent('.graphiql-editor-tool');
    expect(headers).toContain(`Bearer ${token}`);

    await page.click('.graphiql-execute-button');
    const answer = await resultWith(page, '"role"');
    expect(answer).toContain('"ADMIN"');
    expect(answer).toContain('explorer admin');
    if (process.env.EXPLORER_SCREENSHOT) await page.screenshot({ path: process.env.EXPLORER_SCREENSHOT });
    expect(outside).toEqual([]);
    expect(problems).toEqual([]);

    // A subscription goes over graphql-ws with the same token, and shows events as they come.
    const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Explorer workspace' } }, token);
    const assistant = await t.ok(
      CreateAssistantDocument,
      { input: { workspaceId: ws.createWorkspace.workspace!.id, name: 'Explorer assistant' } },
      token,
    );
    const assistantId = assistant.createAssistant.assistant!.id;
    await setQuery(
      page,
      `subscription { turnEvents(assistantId: "${assistantId}", afterSeq: 0) { seq type conversationId } }`,
    );
    const runtime = await t.token(Role.RUNTIME);
    const beginTurn = (conversationId: string) =>
      t.ok(BeginTurnDocument, { input: { assistantId, conversationId } }, runtime);
    await beginTurn('first-turn');
    await page.click('.graphiql-execute-button');
    expect(await resultWith(page, 'first-turn')).toContain('TURN_STARTED'); // replayed from afterSeq 0
    await beginTurn('second-turn'); // the subscription is open now: this one arrives live
    expect(await resultWith(page, 'second-turn')).toContain('TURN_STARTED');
    expect(problems).toEqual([]);
    await page.close();
  });
});
