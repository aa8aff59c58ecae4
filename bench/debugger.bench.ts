/**
 * `npm run bench -- debugger`: the debugger page in Chromium with 1,000 calls (ten conversations
 * of a hundred), against the same page with 10 calls (ten conversations of one), in the same run:
 * time until all calls are on screen live and on replay, the conversation filter narrowing to one
 * conversation and back, one scroll to the bottom and back, and long tasks meanwhile. Page-clock
 * milliseconds; the ratios are what to read on a shared machine. Skipped when no Chromium is
 * installed (`CHROMIUM_PATH`).
 */
import { print } from 'graphql';
import type { Browser } from 'playwright-core';
import { Role } from '../src/auth/api-token.entity.js';
import {
  BeginTurnDocument,
  CallToolDocument,
  ConnectionOperationsDocument,
  CreateAssistantDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  EnableDocument,
  SetConnectedToolsDocument,
  type BeginTurnMutation,
  type CallToolMutation,
  type ConnectionOperationsQuery,
  type CreateAssistantMutation,
  type CreateConnectionMutation,
  type CreateWorkspaceMutation,
} from '../test/generated/graphql.js';
import { hasChromium, launchChromium, signInToDebugger, CHROMIUM } from '../test/support/browser.js';
import { busy, busyMeter, scrollFrame, shown } from '../test/support/debugger-page.js';
import { benchDatabase, fmt, startBenchApp, startPeerProcess, type BenchApp } from './support.js';

const TURNS = 10;
/** tsx (esbuild, keepNames) wraps the page functions' inner closures in `__name`, which pages lack. */
const KEEP_NAMES = 'globalThis.__name = (f) => f;';

interface Numbers {
  made: number;
  live: number;
  liveBusy: number;
  replay: number;
  replayBusy: number;
  filter: number;
  unfilter: number;
  scroll: number;
}

/** A workspace of its own whose assistant has the peer's tool, `callsPerTurn` calls in each of ten conversations, measured on the page. */
async function measure(
  app: BenchApp,
  browser: Browser,
  peerUrl: string,
  callsPerTurn: number,
): Promise<Numbers> {
  const admin = await app.token(Role.ADMIN);
  const operator = await app.token(Role.OPERATOR);
  const runtime = await app.token(Role.RUNTIME);
  const name = `Debugger ${callsPerTurn}`;
  const ws = await app.gql<CreateWorkspaceMutation>(
    print(CreateWorkspaceDocument),
    { input: { name } },
    admin,
  );
  const workspaceId = ws.createWorkspace.workspace!.id;
  const customer = await app.token(
    Role.CUSTOMER,
    Buffer.from(workspaceId, 'base64url').toString().split(':')[1],
  );
  const assistant = await app.gql<CreateAssistantMutation>(
    print(CreateAssistantDocument),
    { input: { workspaceId, name } },
    admin,
  );
  const assistantId = assistant.createAssistant.assistant!.id;
  const conn = await app.gql<CreateConnectionMutation>(
    print(CreateConnectionDocument),
    {
      input: {
        workspaceId,
        name: 'CRM',
        kind: 'MCP',
        endpointUrl: peerUrl,
        timeoutMs: null,
        credential: null,
      },
    },
    operator,
  );
  const connectionId = conn.createConnection.connection!.id;
  const listed = await app.gql<ConnectionOperationsQuery>(
    print(ConnectionOperationsDocument),
    { id: connectionId },
    admin,
  );
  for (const op of listed.connection!.operations.nodes)
    if (!op.enabled) await app.gql(print(EnableDocument), { input: { operationId: op.id } }, operator);
  await app.gql(
    print(SetConnectedToolsDocument),
    { input: { assistantId, connectionId, enabled: true } },
    customer,
  );

  const total = TURNS * callsPerTurn;
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await page.addInitScript(KEEP_NAMES);
  await page.addInitScript(busyMeter);
  await signInToDebugger(page, app.app.http.url, customer);
  await page.waitForSelector('#conn.on', { timeout: 10_000 });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: TURNS }, async (_, i) => {
      const turn = await app.gql<BeginTurnMutation>(
        print(BeginTurnDocument),
        { input: { assistantId, conversationId: `conv-${i}` } },
        runtime,
      );
      for (let n = 0; n < callsPerTurn; n++) {
        const called = await app.gql<CallToolMutation>(
          print(CallToolDocument),
          { input: { turnId: turn.beginTurn.turnId, name: 'crm__tool_0', arguments: {} } },
          runtime,
        );
        if (called.callTool.status !== 'SUCCEEDED') throw new Error(`call ${called.callTool.status}`);
      }
    }),
  );
  const made = performance.now() - started;
  const live = await shown(page, '.call[data-status=SUCCEEDED]', total);
  const liveBusy = await busy(page);

  const again = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await again.addInitScript(KEEP_NAMES);
  await again.addInitScript(busyMeter);
  await signInToDebugger(again, app.app.http.url, customer);
  const replay = await shown(again, '.call[data-status=SUCCEEDED]', total);
  const replayBusy = await busy(again);
  await again.fill('#conversation', 'conv-3');
  const visible = '.turn:not([hidden]) .call';
  const filter = await shown(again, visible, callsPerTurn);
  await again.fill('#conversation', '');
  const unfilter = await shown(again, visible, total);
  const scroll = await scrollFrame(again);
  await page.close();
  await again.close();
  return { made, live, liveBusy, replay, replayBusy, filter, unfilter, scroll };
}

export async function run(): Promise<void> {
  if (!hasChromium) {
    console.log(`skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
    return;
  }
  const db = await benchDatabase();
  const app = await startBenchApp(db.url);
  const peer = await startPeerProcess(1);
  const browser = await launchChromium();
  try {
    const small = await measure(app, browser, peer.url, 1);
    const large = await measure(app, browser, peer.url, 100);
    console.log(`calls on the page: ${TURNS} (baseline) | ${TURNS * 100} | ratio`);
    for (const [label, key] of [
      ['all on screen after the last call answered, live', 'live'],
      ['long tasks while they arrived', 'liveBusy'],
      ['replay: sign-in to all on screen', 'replay'],
      ['long tasks during the replay', 'replayBusy'],
      ['filter to one conversation', 'filter'],
      ['back to all', 'unfilter'],
      ['scroll to the bottom and back', 'scroll'],
    ] as const) {
      const ratio = small[key] > 0 ? `×${fmt(large[key] / small[key], 1)}` : '-';
      console.log(`  ${label}: ${fmt(small[key], 0)} ms | ${fmt(large[key], 0)} ms | ${ratio}`);
    }
    console.log(`  (calls made in ${fmt(small.made, 0)} ms and ${fmt(large.made, 0)} ms)`);
  } finally {
    await browser.close();
    await peer.stop();
    await app.stop();
    await db.cleanup();
  }
}
