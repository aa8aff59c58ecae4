/**
 * A hostile MCP server behind OAuth that echoes the access token it receives (issue 11, finding 4,
 * the OAuth variant of echo.test.ts): in its server info, instructions, tool names, titles,
 * descriptions and schemas, results and errors. After sign-in, discovery, calls and a failing
 * call, no 8-character fragment of the access token (nor of the refresh token) is readable by a
 * CUSTOMER anywhere, nor in what the runtime got, nor in the logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../../../src/connections/scrub.js';
import { startOAuthPeer, type OAuthPeer } from '../../support/oauth-server.js';
import { fragmentsIn, readEverything } from '../../support/reach.js';
import {
  createMcpConnection,
  createWorkspace,
  Role,
  signIn,
  startLoggedApp,
  storedTokens,
  type LoggedApp,
} from '../oauth/helpers.js';

let t: LoggedApp;
let peer: OAuthPeer;

beforeAll(async () => {
  t = await startLoggedApp();
  peer = await startOAuthPeer({ echoToken: true });
});

afterAll(async () => {
  await t?.stop();
  await peer?.close();
});

async function gql<T>(query: string, variables: Record<string, unknown>, token: string): Promise<T> {
  const res = await fetch(new URL('/graphql', t.origin), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (body.errors?.length) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

describe('an MCP server that echoes its OAuth access token', () => {
  it('should leave no fragment of the token anywhere a customer, the runtime or the logs can see', async () => {
    const admin = await t.token(Role.ADMIN);
    const operator = await t.token(Role.OPERATOR);
    const runtime = await t.token(Role.RUNTIME);
    const workspaceId = await createWorkspace(t, admin);
    const rawWorkspace = Buffer.from(workspaceId, 'base64url').toString('utf8').split(':')[1]!;
    const customer = await t.token(Role.CUSTOMER, 'customer', rawWorkspace);
    const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
    expect(c.status).toBe('NEEDS_SIGN_IN');
    expect((await signIn(t, peer, c.id, operator)).status).toBe(200);
    const { accessToken, refreshToken } = await storedTokens(t, c.uuid);
    expect(accessToken).not.toBeNull();

    // The sign-in's discovery met the echoing server: its tools are there, the token is not.
    const listed = await gql<{
      connection: { status: string; operations: { nodes: { id: string; name: string; enabled: boolean }[] } };
    }>(
      `query ($id: ID!) { connection(id: $id) { status operations(first: 100) { nodes { id name enabled } } } }`,
      { id: c.id },
      admin,
    );
    expect(listed.connection.status).toBe('READY');
    for (const op of listed.connection.operations.nodes)
      if (!op.enabled)
        await gql(
          `mutation ($id: ID!) { enable(input: { operationId: $id }) { operation { id } } }`,
          { id: op.id },
          admin,
        );
    const assistant = await gql<{ createAssistant: { assistant: { id: string } } }>(
      `mutation ($w: ID!) { createAssistant(input: { workspaceId: $w, name: "bot" }) { assistant { id } } }`,
      { w: workspaceId },
      admin,
    );
    const assistantId = assistant.createAssistant.assistant.id;
    await gql(
      `mutation ($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { changed } }`,
      { a: assistantId, c: c.id },
      customer,
    );

    const runtimeTexts: string[] = [];
    const begun = await gql<{ beginTurn: { turnId: string; tools: { name: string }[] } }>(
      `mutation ($a: ID!) { beginTurn(input: { assistantId: $a, conversationId: "c1" }) { turnId tools { name description inputSchema } } }`,
      { a: assistantId },
      runtime,
    );
    runtimeTexts.push(JSON.stringify(begun));
    const { turnId, tools } = begun.beginTurn;
    let called = 0;
    for (const suffix of ['leak', 'leak_error', 'whoami']) {
      const tool = tools.find((x) => x.name.endsWith(`__${suffix}`));
      if (!tool) continue;
      called++;
      const res = await gql(
        `mutation ($t: ID!, $n: String!) { callTool(input: { turnId: $t, name: $n, arguments: { q: "plain" } }) {
           ok status content structuredContent message truncated } }`,
        { t: turnId, n: tool.name },
        runtime,
      );
      runtimeTexts.push(JSON.stringify(res));
    }
    expect(called).toBeGreaterThanOrEqual(2);
    await gql(
      `mutation ($t: ID!) { finishTurn(input: { turnId: $t }) { finished } }`,
      { t: turnId },
      runtime,
    );
    // The server got the token on those calls (and so had it to echo).
    expect(peer.mcpRequests.filter((r) => r.method === 'tools/call' && r.authorized).length).toBe(called);

    const reach = await readEverything(new URL('/graphql', t.origin).toString(), customer, [
      'Workspace.auditEvents',
    ]);
    expect(reach.errors).toEqual([]);
    const kinds = reach.texts.join('\n');
    for (const type of ['"Connection"', '"Operation"', '"DiscoveryRun"', '"Turn"', '"TurnCall"'])
      expect(kinds).toContain(type);
    const everything = [...reach.texts, ...runtimeTexts, ...t.logs].join('\n');
    expect(fragmentsIn(everything, accessToken!)).toEqual([]);
    // It was echoed, and scrubbed where it came in: the customer reads the marker, not the token.
    expect(reach.texts.join('\n')).toContain(REDACTED);
    expect(runtimeTexts.join('\n')).toContain(REDACTED);
    if (refreshToken) expect(fragmentsIn(everything, refreshToken)).toEqual([]);
  });
});
