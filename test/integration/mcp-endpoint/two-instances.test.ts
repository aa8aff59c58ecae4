/**
 * The MCP endpoint on two instances of one database (issue 27): a session begun on A (by the SDK
 * 1.32 client) continues on B, on the same Turn; a gate flip on A (the operator's switch, the
 * customer's choice) shows in B's next `tools/list` within a second; a token revoked on A is
 * refused on B within a second; a session ended on A is 404 on B within a second.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DisableDocument, EnableDocument } from '../../generated/graphql.js';
import type { TestApp } from '../../support/app.js';
import { endpointUrl, mcpClientTokenOf, mcpRequest, recordedCalls } from '../../support/mcp-endpoint.js';
import {
  buildWorld,
  connectTools,
  startTwoInstances,
  type TwoInstances,
  type World,
} from '../../support/turns.js';

let instances: TwoInstances;
let A: TestApp;
let B: TestApp;

beforeAll(async () => {
  instances = await startTwoInstances();
  ({ A, B } = instances);
});
afterAll(() => instances.stop());

/** Polls `check` until it holds; fails when it has not within `ms` (the bound: 1 s). */
async function within(ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (await check()) return;
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Session {
  w: World;
  token: { id: string; secret: string };
  sessionId: string;
  close(): Promise<void>;
}

/** A world of its own, and a session begun on A by the SDK 1.32 client. */
async function sessionOnA(name: string): Promise<Session> {
  const w = await buildWorld(A, instances.peer.url, name);
  await connectTools(A, w);
  const token = await mcpClientTokenOf(A, w, `${name} client`);
  const client = new Client({ name: 'two-instances', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(endpointUrl(A, w.assistantId), {
    requestInit: { headers: { authorization: `Bearer ${token.secret}` } },
  });
  await client.connect(transport);
  const read = await client.callTool({ name: `${name.toLowerCase()}__lookup`, arguments: { email: 'on-a' } });
  expect(read.isError).toBeFalsy();
  return { w, token, sessionId: transport.sessionId!, close: () => client.close() };
}

/** A request on `app` in the session; its status and JSON-RPC answer. */
async function onInstance(
  app: TestApp,
  s: Session,
  method: string,
  params: Record<string, unknown> = {},
): Promise<{
  status: number;
  body: { result?: Record<string, unknown>; error?: { message: string } } | null;
}> {
  const res = await mcpRequest(endpointUrl(app, s.w.assistantId), s.token.secret, {
    body: { jsonrpc: '2.0', id: 2, method, params },
    headers: { 'mcp-session-id': s.sessionId, 'mcp-protocol-version': '2025-11-25' },
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as never) : null };
}

async function listedOn(app: TestApp, s: Session): Promise<string[]> {
  const { body } = await onInstance(app, s, 'tools/list');
  return ((body?.result?.tools ?? []) as { name: string }[]).map((t) => t.name);
}

it('a session begun on A continues on B, on the same Turn', async () => {
  const s = await sessionOnA('Hop');
  try {
    const called = await onInstance(B, s, 'tools/call', {
      name: 'hop__lookup',
      arguments: { email: 'on-b' },
    });
    expect(called.status).toBe(200);
    expect(called.body?.result?.isError).toBeFalsy();
    const [onA] = await recordedCalls(A, s.w.assistantId, 'hop__lookup', { email: 'on-a' });
    const [onB] = await recordedCalls(A, s.w.assistantId, 'hop__lookup', { email: 'on-b' });
    expect(onB!.turnId).toBe(onA!.turnId);
  } finally {
    await s.close();
  }
});

it("the operator's switch and the customer's choice, flipped on A, show in a tools/list on B within 1 s", async () => {
  const s = await sessionOnA('Gate');
  try {
    expect(await listedOn(B, s)).toContain('gate__lookup');
    await A.ok(
      DisableDocument,
      { input: { operationId: s.w.ops.lookup!.id, reason: 'incident' } },
      s.w.operator,
    );
    await within(1_000, async () => !(await listedOn(B, s)).includes('gate__lookup'));
    await A.ok(EnableDocument, { input: { operationId: s.w.ops.lookup!.id } }, s.w.operator);
    await within(1_000, async () => (await listedOn(B, s)).includes('gate__lookup'));
    // The customer turns the connection's tools off for the assistant: B lists none of them.
    await connectTools(A, s.w, false);
    await within(1_000, async () => (await listedOn(B, s)).length === 0);
  } finally {
    await s.close();
  }
});

it('a token revoked on A is refused on B within 1 s', async () => {
  const s = await sessionOnA('Revoke');
  try {
    expect((await onInstance(B, s, 'tools/list')).status).toBe(200);
    await A.ok(
      `mutation($id: ID!) { revokeApiToken(input: { id: $id }) { apiToken { id } } }`,
      { id: s.token.id },
      s.w.customer,
    );
    await within(1_000, async () => (await onInstance(B, s, 'tools/list')).status === 401);
  } finally {
    await s.close().catch(() => undefined);
  }
});

it('a session ended on A (DELETE) is 404 on B within 1 s, and on B after its LISTEN connection resets', async () => {
  const s = await sessionOnA('Ends');
  expect((await onInstance(B, s, 'tools/list')).status).toBe(200);
  const ended = await mcpRequest(endpointUrl(A, s.w.assistantId), s.token.secret, {
    method: 'DELETE',
    headers: { 'mcp-session-id': s.sessionId, 'mcp-protocol-version': '2025-11-25' },
  });
  expect(ended.status).toBe(200);
  expect((await onInstance(A, s, 'tools/list')).status).toBe(404);
  await within(
    1_000,
    async () =>
      (await onInstance(B, s, 'tools/call', { name: 'ends__lookup', arguments: { email: 'x' } })).status ===
      404,
  );
  // B's earlier answers are not trusted after a reset of its LISTEN connection: it reads the table.
  B.app.services.notifier.dropConnectionForTest();
  expect((await onInstance(B, s, 'tools/list')).status).toBe(404);
  await s.close().catch(() => undefined);
});
