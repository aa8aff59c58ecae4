/**
 * The SDK 1.32 `Client` (`@modelcontextprotocol/sdk`, a client nobody here wrote) against the
 * endpoint over `StreamableHTTPClientTransport`, with answers as JSON and as an event stream: it
 * lists the assistant's tools, calls a READ and a WRITE, and each call is a TurnCall of one Turn,
 * marked as coming through MCP with the token's label, the WRITE with its ledger row. Its session
 * ends with `DELETE` (terminateSession), after which the session id is 404 (issue 27).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  endpointUrl,
  fetchFor,
  type AnswerForm,
  mcpRequest,
  mintMcpClientToken,
  recordedCalls,
} from '../../support/mcp-endpoint.js';
import { startCrmWorld, type CrmFixture } from '../../support/turns.js';

let f: CrmFixture;
let token: string;
const LABEL = 'sdk 1.32 client';

beforeAll(async () => {
  f = await startCrmWorld('Sdk1');
  token = await mintMcpClientToken(f.t, f.w, LABEL);
});
afterAll(async () => {
  await f.stop();
});

async function connect(answer: AnswerForm, seen: string[]) {
  const client = new Client({ name: 'sdk132-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(endpointUrl(f.t, f.w.assistantId), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: fetchFor(answer, seen),
  });
  await client.connect(transport);
  return { client, transport };
}

const TURN = `query($id: ID!) {
  node(id: $id) { ... on Turn { conversationId finishedAt calls(first: 20) { nodes { declaredName status risk } } } }
}`;

describe.each(['json', 'sse'] as const)('SDK 1.32 client, %s answers', (answer) => {
  it('lists, calls a READ and a WRITE; one Turn through MCP with the token label, the WRITE has its ledger row; DELETE ends the session', async () => {
    const seen: string[] = [];
    const email = `sdk132-${answer}@example.com`;
    const { client, transport } = await connect(answer, seen);
    let sessionId: string | undefined;
    try {
      expect(client.getServerVersion()?.name).toBe('connected-tools');
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name).sort()).toEqual([
        'sdk1__fails',
        'sdk1__lookup',
        'sdk1__slow_read',
        'sdk1__slow_write',
        'sdk1__update',
      ]);
      const read = await client.callTool({ name: 'sdk1__lookup', arguments: { email } });
      expect(read.isError).toBeFalsy();
      expect(JSON.stringify(read.content)).toContain(email);
      const write = await client.callTool({ name: 'sdk1__update', arguments: { email, plan: 'team' } });
      expect(write.isError).toBeFalsy();
      expect(JSON.stringify(write.content)).toContain('team');
      const failed = await client.callTool({ name: 'sdk1__fails', arguments: {} });
      expect(failed.isError).toBe(true);
      const expected = answer === 'json' ? 'application/json' : 'text/event-stream';
      expect(seen.filter((c) => c.startsWith(expected)).length).toBeGreaterThanOrEqual(4);

      sessionId = transport.sessionId;
      expect(sessionId).toBeTruthy();
      await transport.terminateSession();
    } finally {
      await client.close();
    }
    // The ended session is unknown now: 404, initialize again.
    const after = await mcpRequest(endpointUrl(f.t, f.w.assistantId), token, {
      body: { jsonrpc: '2.0', id: 9, method: 'tools/list' },
      headers: { 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { error: { message: string } }).error.message).toMatch(
      /initialize again/,
    );

    const [readRow] = await recordedCalls(f.t, f.w.assistantId, 'sdk1__lookup', { email });
    const [writeRow] = await recordedCalls(f.t, f.w.assistantId, 'sdk1__update', { email });
    expect(readRow!.turnId).toBe(writeRow!.turnId);
    expect(readRow).toMatchObject({ status: 'SUCCEEDED', risk: 'READ', ledgerStatus: null });
    expect(writeRow).toMatchObject({ status: 'SUCCEEDED', risk: 'WRITE', ledgerOutcome: 'SUCCEEDED' });

    // As an ADMIN sees it through GraphQL: the session's Turn, its calls, finished by the DELETE.
    const turnId = Buffer.from(`Turn:${readRow!.turnId}`).toString('base64url');
    const turn = await f.t.ok<
      {
        node: {
          conversationId: string;
          finishedAt: string | null;
          calls: { nodes: { declaredName: string; status: string; risk: string }[] };
        };
      },
      { id: string }
    >(TURN, { id: turnId }, f.w.admin);
    expect(turn.node.conversationId).toMatch(/^mcp:s:/);
    expect(turn.node.finishedAt).not.toBeNull();
    expect(turn.node.calls.nodes.map((c) => c.declaredName)).toEqual([
      'sdk1__lookup',
      'sdk1__update',
      'sdk1__fails',
    ]);
    // The debugger's TURN_STARTED says it came through MCP, with the token's label (never the token).
    const sql = new pg.Client({ connectionString: f.t.config.databaseUrl! });
    await sql.connect();
    try {
      const { rows } = await sql.query<{ payload: { via?: unknown } }>(
        `select payload from turn_event where turn_id = $1 and type = 'TURN_STARTED'`,
        [readRow!.turnId],
      );
      expect(rows[0]?.payload.via).toEqual({ door: 'MCP', token: LABEL });
      expect(JSON.stringify(rows)).not.toContain(token);
    } finally {
      await sql.end();
    }
  });
});
