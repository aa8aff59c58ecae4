/**
 * A command-line MCP client for the MCP conformance suite (`@modelcontextprotocol/conformance`,
 * which needs Node 22; see docs/conformance.md). The suite runs it as `<command> <server URL>` with
 * MCP_CONFORMANCE_SCENARIO set.
 *
 * - `initialize`, `tools_call`: our McpClient against the scenario's server, exactly as discovery
 *   and the turn path use it (discovery, then a call).
 * - `auth/*`: the whole service, on DATABASE_URL or the embedded default: create the connection
 *   (discovery finds NEEDS_SIGN_IN), beginSignIn, follow the authorization URL as a browser would,
 *   land on our /oauth/callback, then discover again and call a tool through a turn.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp } from '../src/app.js';
import { Role } from '../src/auth/api-token.entity.js';
import { mintToken } from '../src/auth/auth.service.js';
import { loadConfig } from '../src/config.js';
import { OutboundClient } from '../src/http/outbound.js';
import { createLogger } from '../src/logger.js';
import { McpClient } from '../src/mcp/client.js';
import { benchDatabase } from '../bench/support.js';

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const serverUrl = process.argv.at(-1) ?? '';

function log(message: string): void {
  process.stderr.write(`[conformance-client] ${message}\n`);
}

async function plain(): Promise<void> {
  const outbound = new OutboundClient({ allowLoopback: true });
  const mcp = new McpClient(outbound);
  const ep = { id: 'conformance', url: serverUrl, auth: { kind: 'none' as const } };
  try {
    const found = await mcp.discover(ep);
    log(`discovered ${found.tools.length} tools from ${JSON.stringify(found.initialize.serverInfo)}`);
    // The scenario's tool: `add_numbers` (tools_call) with its two numbers, else the first one listed
    // (sse-retry's `test_reconnection`, elicitation's tool) with no arguments.
    const tool = found.tools.find((t) => t.name === 'add_numbers') ?? found.tools[0];
    if (tool) {
      const outcome = await mcp.callTool(
        { ...ep, protocolVersion: found.initialize.protocolVersion },
        tool.name,
        tool.name === 'add_numbers' ? { a: 2, b: 3 } : {},
        { risk: tool.risk, idempotent: tool.idempotent },
      );
      log(
        `${tool.name}: ${outcome.kind} ${JSON.stringify('content' in outcome ? outcome.content : outcome)}`,
      );
      if (outcome.kind !== 'success') process.exitCode = 1;
    }
  } finally {
    await mcp.whenIdle();
    await outbound.close();
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function gql<T>(
  url: string,
  token: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (body.errors) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
  return body.data!;
}

/**
 * The operator's client registration, when the scenario gives one (`auth/pre-registration`):
 * `MCP_CONFORMANCE_CONTEXT` is JSON with `client_id` and `client_secret`.
 */
function preRegistered(): { clientId: string | null; clientSecret: string | null } {
  try {
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<string, unknown>;
    return {
      clientId: typeof context.client_id === 'string' ? context.client_id : null,
      clientSecret: typeof context.client_secret === 'string' ? context.client_secret : null,
    };
  } catch {
    return { clientId: null, clientSecret: null };
  }
}

/** beginSignIn, then the browser: follow redirects until our own callback answers. */
async function signIn(url: string, admin: string, connectionId: string): Promise<void> {
  const begun = await gql<{ beginSignIn: { authorizationUrl: string | null; userErrors: unknown[] } }>(
    url,
    admin,
    'mutation($c: ID!, $id: String, $secret: String) { beginSignIn(input: { connectionId: $c, clientId: $id, clientSecret: $secret }) { authorizationUrl userErrors { field message code } } }',
    { c: connectionId, id: preRegistered().clientId, secret: preRegistered().clientSecret },
  );
  if (!begun.beginSignIn.authorizationUrl)
    throw new Error(`beginSignIn: ${JSON.stringify(begun.beginSignIn.userErrors)}`);
  let next = begun.beginSignIn.authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      next = new URL(location, next).toString();
      continue;
    }
    const page = await res.text();
    log(
      `callback answered ${res.status}: ${page
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 200)}`,
    );
    if (res.status !== 200) throw new Error('the sign-in did not complete');
    return;
  }
  throw new Error('the sign-in did not reach our callback within 10 redirects');
}

async function withSignIn(): Promise<void> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'ct-conformance-'));
  // A database of its own for the run, on DATABASE_URL's server or an embedded one.
  const db = await benchDatabase();
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: db.url,
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://localhost:${port}`,
    DATA_DIR: dataDir,
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  });
  const app = await startApp(config, createLogger(config.logLevel, process.stderr), {
    bootstrapAdmin: false,
  });
  try {
    const em = app.services.orm.em.fork();
    const admin = (await mintToken(em, { role: Role.ADMIN, label: 'conformance' })).token;
    const runtime = (await mintToken(em, { role: Role.RUNTIME, label: 'conformance runtime' })).token;
    const url = app.http.url;
    const ws = await gql<{ createWorkspace: { workspace: { id: string } } }>(
      url,
      admin,
      'mutation { createWorkspace(input: { name: "Conformance" }) { workspace { id } } }',
      {},
    );
    const workspaceId = ws.createWorkspace.workspace.id;
    const created = await gql<{ createConnection: { connection: { id: string; status: string } } }>(
      url,
      admin,
      'mutation($w: ID!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: "Conformance", endpointUrl: $u }) { connection { id status } } }',
      { w: workspaceId, u: serverUrl },
    );
    const connectionId = created.createConnection.connection.id;
    log(`connection status after connect: ${created.createConnection.connection.status}`);
    await signIn(url, admin, connectionId);
    const asst = await gql<{ createAssistant: { assistant: { id: string } } }>(
      url,
      admin,
      'mutation($w: ID!) { createAssistant(input: { workspaceId: $w, name: "bot" }) { assistant { id } } }',
      { w: workspaceId },
    );
    const assistantId = asst.createAssistant.assistant.id;
    const ops = await gql<{
      connection: { status: string; operations: { nodes: { id: string; name: string; enabled: boolean }[] } };
    }>(
      url,
      admin,
      'query($c: ID!) { connection(id: $c) { status operations(first: 100) { nodes { id name enabled } } } }',
      { c: connectionId },
    );
    log(
      `after sign-in: ${ops.connection.status}, tools ${ops.connection.operations.nodes.map((o) => o.name).join(', ')}`,
    );
    for (const op of ops.connection.operations.nodes) {
      if (!op.enabled)
        await gql(
          url,
          admin,
          'mutation($o: ID!) { enable(input: { operationId: $o }) { operation { id } } }',
          { o: op.id },
        );
    }
    await gql(
      url,
      admin,
      'mutation($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { changed } }',
      { a: assistantId, c: connectionId },
    );
    const turn = await gql<{ beginTurn: { turnId: string; tools: { name: string }[] } }>(
      url,
      runtime,
      'mutation($a: ID!) { beginTurn(input: { assistantId: $a, conversationId: "conformance" }) { turnId tools { name } } }',
      { a: assistantId },
    );
    const tool = turn.beginTurn.tools.find((t) => t.name !== 'finish_turn');
    if (tool) {
      const call = async () => {
        const result = await gql<{ callTool: { ok: boolean; status: string; message: string | null } }>(
          url,
          runtime,
          'mutation($t: ID!, $n: String!) { callTool(input: { turnId: $t, name: $n, arguments: {} }) { ok status message } }',
          { t: turn.beginTurn.turnId, n: tool.name },
        );
        log(`${tool.name}: ${JSON.stringify(result.callTool)}`);
        return result.callTool;
      };
      const first = await call();
      // A 403 insufficient_scope ends the sign-in (step-up): the operator signs in once more, and
      // that sign-in asks for the wider scope. Once only, as a person would.
      const after = await gql<{ connection: { status: string } }>(
        url,
        admin,
        'query($c: ID!) { connection(id: $c) { status } }',
        { c: connectionId },
      );
      if (!first.ok && after.connection.status === 'NEEDS_SIGN_IN') {
        log('the connection needs sign-in again (step-up): signing in once more');
        await signIn(url, admin, connectionId);
        await call();
      }
    }
  } finally {
    await app.stop();
    await db.cleanup();
    await rm(dataDir, { recursive: true, force: true });
  }
}

try {
  if (scenario.startsWith('auth/')) await withSignIn();
  else await plain();
} catch (err) {
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
