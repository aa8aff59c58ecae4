/**
 * A realistic journey that leaves a database with something in every table the API reads:
 * MCP and OpenAPI connections, discovery runs with skipped items and review reasons (open and
 * resolved), an OAuth sign-in, turns with calls of every status, ledger rows and audit events.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import {
  ConnectionOperationsDocument,
  CreateAssistantDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
  DiscoveryRunsDocument,
  EnableDocument,
  FinishTurnDocument,
  SetConnectedToolsDocument,
  SetRiskDocument,
  SetCallCapDocument,
  SetCallLimitDocument,
} from '../generated/graphql.js';
import { REDIRECT_URI, signIn, type LoggedApp } from '../integration/oauth/helpers.js';
import { Role, type TestApp } from './app.js';
import { rawId } from './ids.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from './mcp-servers.js';
import { startOAuthPeer, type OAuthPeer } from './oauth-server.js';
import { sleep } from './turns.js';
import { Cleanups } from './cleanups.js';

export { REDIRECT_URI };

export interface Journey {
  tokens: { admin: string; operator: string; runtime: string; customer: string };
  /** Global IDs the journey made, by GraphQL type name. */
  ids: Map<string, string[]>;
  workspaceId: string;
  assistantId: string;
  /** Every call status the journey produced. */
  statuses: Set<string>;
  close(): Promise<void>;
}

const TOOLS_V1: PeerTool[] = [
  {
    name: 'lookup',
    description: 'Look a customer up',
    inputSchema: { email: z.string() },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'update',
    description: 'Update a customer',
    inputSchema: { email: z.string(), plan: z.string() },
  },
  {
    name: 'fails',
    description: 'Always reports an error',
    annotations: { readOnlyHint: true },
    handler: () => ({ isError: true, content: [{ type: 'text', text: 'customer not found' }] }),
  },
  {
    name: 'slow',
    description: 'Takes longer than the budget',
    annotations: { readOnlyHint: true },
    handler: async () => {
      await sleep(1_500);
      return { content: [{ type: 'text', text: 'late' }] };
    },
  },
  {
    name: 'steps',
    description: 'Reports progress and logs while it works',
    annotations: { readOnlyHint: true },
    handler: async (_args, extra) => {
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: 1, total: 2, message: 'half way' },
        });
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: 'steps done' },
      });
      return { content: [{ type: 'text', text: 'done' }] };
    },
  },
  {
    name: 'notes',
    description: 'Reads notes',
    inputSchema: { id: z.string() },
    annotations: { readOnlyHint: true },
  },
];

/** The refresh: `notes` gains an argument and `lookup` becomes a write (both held for review). */
const TOOLS_V2: PeerTool[] = TOOLS_V1.map((tool) =>
  tool.name === 'notes'
    ? { ...tool, inputSchema: { id: z.string(), since: z.string() } }
    : tool.name === 'lookup'
      ? { ...tool, annotations: { readOnlyHint: false } }
      : tool,
);

function openApiDescription(base: string): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1' },
    servers: [{ url: `${base}/api` }],
    paths: {
      '/pets/{petId}': {
        get: {
          operationId: 'getPet',
          parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/pets': {
        post: {
          operationId: 'createPet',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
              },
            },
          },
          responses: { '201': { description: 'created' } },
        },
      },
      '/old': { get: { operationId: 'old', deprecated: true, responses: { '200': { description: 'ok' } } } },
    },
  };
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

function add(ids: Map<string, string[]>, type: string, id: string): void {
  ids.set(type, [...(ids.get(type) ?? []), id]);
}

/**
 * Runs the journey on `t` (started with `PUBLIC_URL` = the OAuth helpers' public address).
 * Takes a few seconds: one call waits for its timeout.
 */
export async function runJourney(t: TestApp): Promise<Journey> {
  const cleanups = new Cleanups();
  const ids = new Map<string, string[]>();
  const statuses = new Set<string>();
  const admin = await t.token(Role.ADMIN, null, 'admin ada');
  const operator = await t.token(Role.OPERATOR, null, 'operator olga');
  const runtime = await t.token(Role.RUNTIME, null, 'runtime');

  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Journey' } }, admin);
  const workspaceId = ws.createWorkspace.workspace!.id;
  add(ids, 'Workspace', workspaceId);
  const customer = await t.token(Role.CUSTOMER, rawId(workspaceId), 'customer cara');
  const assistant = await t.ok(CreateAssistantDocument, { input: { workspaceId, name: 'Helper' } }, admin);
  const assistantId = assistant.createAssistant.assistant!.id;
  add(ids, 'Assistant', assistantId);

  // MCP, then a refresh that holds two operations back for review.
  const mcp: SdkServerHandle = await startSdkServer({ stateful: false, json: false, tools: TOOLS_V1 });
  cleanups.push(() => mcp.close());
  const mcpConn = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId,
        kind: 'MCP',
        name: 'CRM',
        endpointUrl: mcp.url,
        timeoutMs: 500,
        credential: { kind: 'BEARER', key: 'crm-key-0123456789' },
      },
    },
    operator,
  );
  const mcpId = mcpConn.createConnection.connection!.id;
  add(ids, 'Connection', mcpId);
  const listed = await t.ok(ConnectionOperationsDocument, { id: mcpId }, admin);
  for (const op of listed.connection!.operations.nodes) {
    add(ids, 'Operation', op.id);
    if (!op.enabled) await t.ok(EnableDocument, { input: { operationId: op.id } }, operator);
  }
  mcp.setTools(TOOLS_V2);
  await t.ok(DiscoverDocument, { input: { connectionId: mcpId } }, operator);
  const reviewed = await t.ok(ConnectionOperationsDocument, { id: mcpId, needsReview: true }, admin);
  if (reviewed.connection!.operations.nodes.length < 2) throw new Error('the refresh flagged nothing');
  // An admin resolves one review (lookup: accepted as a WRITE now); notes stays open.
  const lookup = reviewed.connection!.operations.nodes.find((o) => o.name === 'lookup')!;
  await t.ok(SetRiskDocument, { input: { operationId: lookup.id, risk: 'WRITE' } }, admin);
  await t.ok(EnableDocument, { input: { operationId: lookup.id } }, admin);
  // Rate limits far above the journey's calls, so that every CallLimit field has rows to answer.
  for (const input of [
    { connectionId: mcpId, calls: 1_000_000 },
    { connectionId: mcpId, workspaceId, calls: 1_000_000 },
    { operationId: lookup.id, calls: 1_000_000 },
  ])
    await t.ok(SetCallLimitDocument, { input }, admin);
  // A concurrency cap far above the journey's calls, so that every CallCap field answers.
  await t.ok(SetCallCapDocument, { input: { connectionId: mcpId, maxInFlight: 10_000 } }, admin);

  // OpenAPI, with a deprecated operation that is skipped, and an API key in a header.
  const api: Server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      if (req.url === '/api/pets/missing') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"no such pet"}');
        return;
      }
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          body: text ? (JSON.parse(text) as unknown) : null,
        }),
      );
    })();
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    api.closeAllConnections();
    await new Promise((r) => api.close(r));
  });
  const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const apiConn = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId,
        kind: 'OPENAPI',
        name: 'Pets',
        descriptionText: JSON.stringify(openApiDescription(base)),
        credential: { kind: 'HEADER', headerName: 'X-Api-Key', key: 'pets-key-0123456789' },
      },
    },
    admin,
  );
  const apiId = apiConn.createConnection.connection!.id;
  add(ids, 'Connection', apiId);
  const apiOps = await t.ok(ConnectionOperationsDocument, { id: apiId }, admin);
  for (const op of apiOps.connection!.operations.nodes) {
    add(ids, 'Operation', op.id);
    if (!op.enabled) await t.ok(EnableDocument, { input: { operationId: op.id } }, admin);
  }

  // A third MCP server that goes away after discovery: its calls fail upstream.
  const gone = await startSdkServer({ stateful: false, json: true, tools: [TOOLS_V1[0]!] });
  const goneConn = await t.ok(
    CreateConnectionDocument,
    { input: { workspaceId, kind: 'MCP', name: 'Gone', endpointUrl: gone.url } },
    operator,
  );
  add(ids, 'Connection', goneConn.createConnection.connection!.id);
  await gone.close();

  // OAuth: a server that asks for sign-in; the operator signs in, which runs a discovery.
  const oauth: OAuthPeer = await startOAuthPeer();
  cleanups.push(() => oauth.close());
  const signed = await t.ok(
    CreateConnectionDocument,
    { input: { workspaceId, kind: 'MCP', name: 'Signed', endpointUrl: oauth.mcpUrl } },
    operator,
  );
  const signedId = signed.createConnection.connection!.id;
  add(ids, 'Connection', signedId);
  const logged = { ...t, origin: new URL(t.url).origin } as unknown as LoggedApp;
  const page = await signIn(logged, oauth, signedId, operator);
  if (page.status !== 200) throw new Error(`sign-in failed: ${page.status}`);

  for (const connectionId of [mcpId, apiId, goneConn.createConnection.connection!.id, signedId]) {
    const r = await t.ok(
      SetConnectedToolsDocument,
      { input: { assistantId, connectionId, enabled: true } },
      customer,
    );
    if (r.setConnectedTools.userErrors.length)
      throw new Error(JSON.stringify(r.setConnectedTools.userErrors));
  }

  for (const connectionId of ids.get('Connection')!) {
    const runs = await t.ok(DiscoveryRunsDocument, { id: connectionId, first: 10 }, admin);
    for (const run of runs.connection!.discoveryRuns.nodes) add(ids, 'DiscoveryRun', run.id);
  }

  // Turns: every status, reads and writes, a finished turn and one still open.
  const call = async (turnId: string, name: string, args: Record<string, unknown>) => {
    const r = await t.ok(
      `mutation($input: CallToolInput!) { callTool(input: $input) { status callId } }`,
      { input: { turnId, name, arguments: args } },
      runtime,
    );
    const result = (r as { callTool: { status: string; callId: string | null } }).callTool;
    statuses.add(result.status);
    if (result.callId) add(ids, 'TurnCall', result.callId);
    return result;
  };
  const begin = async (conversationId: string) => {
    const r = await t.ok(
      `mutation($input: BeginTurnInput!) { beginTurn(input: $input) { turnId tools { name } } }`,
      { input: { assistantId, conversationId } },
      runtime,
    );
    const turn = (r as { beginTurn: { turnId: string; tools: { name: string }[] } }).beginTurn;
    add(ids, 'Turn', turn.turnId);
    return turn;
  };
  const first = await begin('conv-journey-1');
  const signedTool = first.tools.map((x) => x.name).find((n) => n.startsWith('signed__'));
  await call(first.turnId, 'crm__lookup', { email: 'a@b.c' }); // a WRITE now: ledger
  await call(first.turnId, 'crm__update', { email: 'a@b.c', plan: 'pro' }); // WRITE: ledger
  await call(first.turnId, 'crm__fails', {}); // TOOL_ERROR
  await call(first.turnId, 'crm__steps', {}); // progress and log lines
  await call(first.turnId, 'crm__slow', {}); // TIMEOUT
  await call(first.turnId, 'pets__getPet', {}); // REJECTED: no petId
  await call(first.turnId, 'pets__getPet', { petId: 'rex' }); // SUCCEEDED
  await call(first.turnId, 'pets__getPet', { petId: 'missing' }); // TOOL_ERROR (404)
  await call(first.turnId, 'pets__createPet', { name: 'Rex' }); // WRITE: ledger
  await call(first.turnId, 'gone__lookup', { email: 'a@b.c' }); // UPSTREAM_ERROR
  await call(first.turnId, 'crm__notes', { id: '1' }); // UNAVAILABLE: held for review
  await call(first.turnId, 'nope', {}); // UNAVAILABLE: unknown
  if (signedTool) await call(first.turnId, signedTool, {});
  await t.ok(FinishTurnDocument, { input: { turnId: first.turnId } }, runtime);
  // A turn declared for a model API: its record keeps what was left out (issue 26).
  const anthropic = await t.ok(
    `mutation($input: BeginTurnInput!) { beginTurn(input: $input) { turnId leftOut { name code } } }`,
    { input: { assistantId, conversationId: 'conv-journey-anthropic', dialect: 'ANTHROPIC' } },
    runtime,
  );
  add(ids, 'Turn', (anthropic as { beginTurn: { turnId: string } }).beginTurn.turnId);
  const second = await begin('conv-journey-2');
  await call(second.turnId, 'pets__getPet', { petId: 'tom' });

  return {
    tokens: { admin, operator, runtime, customer },
    ids,
    workspaceId,
    assistantId,
    statuses,
    close: async () => {
      await cleanups.run();
    },
  };
}
