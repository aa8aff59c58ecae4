import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  BeginTurnDocument,
  CallToolDocument,
  CreateAssistantDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  EnableDocument,
  ConnectionOperationsDocument,
  SetConnectedToolsDocument,
} from '../generated/graphql.js';
import { Role, startTestApp, type TestApp } from './app.js';
import { rawId } from './ids.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from './mcp-servers.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let releaseSlow: () => void = () => undefined;
const slowGate = new Promise<void>((resolve) => {
  releaseSlow = resolve;
});
/**
 * The slow tools answer only once `release()` is called: a call that timed out is seen to have
 * returned while its tool had not answered (`answered` is 0), with no timing involved.
 */
export const slowTools = { answered: 0, release: () => releaseSlow() };

/** Tools of every shape a call can have. */
export const CRM_TOOLS: PeerTool[] = [
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
    annotations: { idempotentHint: false },
  },
  {
    name: 'fails',
    description: 'Always reports an error',
    annotations: { readOnlyHint: true },
    handler: () => ({ isError: true, content: [{ type: 'text', text: 'customer not found' }] }),
  },
  {
    name: 'slow_read',
    description: 'Takes its time',
    annotations: { readOnlyHint: true },
    handler: async () => {
      await slowGate;
      slowTools.answered++;
      return { content: [{ type: 'text', text: 'late' }] };
    },
  },
  {
    name: 'slow_write',
    description: 'Takes its time, and writes',
    handler: async () => {
      await slowGate;
      slowTools.answered++;
      return { content: [{ type: 'text', text: 'late' }] };
    },
  },
];

export interface World {
  admin: string;
  operator: string;
  runtime: string;
  customer: string;
  workspaceId: string;
  assistantId: string;
  connectionId: string;
  ops: Record<string, { id: string; key: string; enabled: boolean }>;
}

/** A workspace with an assistant and one MCP connection whose tools are all enabled by the operator. */
export async function buildWorld(
  t: TestApp,
  peerUrl: string,
  name = 'CRM',
  timeoutMs?: number,
  credential?: { kind: 'BEARER' | 'HEADER'; key: string; headerName?: string },
): Promise<World> {
  return buildWorldWith(t, name, {
    kind: 'MCP',
    endpointUrl: peerUrl,
    timeoutMs: timeoutMs ?? null,
    credential: credential ?? null,
  });
}

/** A test app, a stateless SDK peer serving {@link CRM_TOOLS}, and one world connected to it. */
export interface CrmFixture {
  t: TestApp;
  peer: SdkServerHandle;
  w: World;
  stop(): Promise<void>;
}

/** The fixture most turn and ops tests start from: every CRM tool enabled and connected. */
export async function startCrmWorld(
  name = 'CRM',
  appOptions?: Parameters<typeof startTestApp>[0],
): Promise<CrmFixture> {
  const t = await startTestApp(appOptions);
  const peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
  const w = await buildWorld(t, peer.url, name);
  await connectTools(t, w);
  return {
    t,
    peer,
    w,
    stop: async () => {
      await t.stop();
      await peer.close();
    },
  };
}

/** Two instances of the service on one database and a stateless SDK peer serving {@link CRM_TOOLS}. */
export interface TwoInstances {
  A: TestApp;
  B: TestApp;
  peer: SdkServerHandle;
  stop(): Promise<void>;
}

export async function startTwoInstances(): Promise<TwoInstances> {
  // One deployment: the instances share SECRET_KEY (stored credentials, signed MCP session ids).
  const env = { SECRET_KEY: randomBytes(32).toString('hex') };
  const A = await startTestApp({ env });
  const B = await startTestApp({ env });
  const peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
  return {
    A,
    B,
    peer,
    stop: async () => {
      await A.stop();
      await B.stop();
      await peer.close();
    },
  };
}

/**
 * A workspace with an assistant and one OpenAPI connection whose operations are all enabled by the
 * operator, connected to the assistant.
 */
export async function buildOpenApiWorld(
  t: TestApp,
  name: string,
  descriptionUrl: string,
  options: {
    timeoutMs?: number;
    credential?: { kind: 'BEARER' | 'HEADER'; key: string; headerName?: string };
  } = {},
): Promise<World> {
  const w = await buildWorldWith(t, name, {
    kind: 'OPENAPI',
    descriptionUrl,
    endpointUrl: null,
    timeoutMs: options.timeoutMs ?? null,
    credential: options.credential ?? null,
  });
  await connectTools(t, w);
  return w;
}

async function buildWorldWith(
  t: TestApp,
  name: string,
  connection: {
    kind: 'MCP' | 'OPENAPI';
    endpointUrl: string | null;
    descriptionUrl?: string;
    timeoutMs: number | null;
    credential: { kind: 'BEARER' | 'HEADER'; key: string; headerName?: string } | null;
  },
): Promise<World> {
  const admin = await t.token(Role.ADMIN);
  const operator = await t.token(Role.OPERATOR);
  const runtime = await t.token(Role.RUNTIME);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: `${name} workspace` } }, admin);
  const workspaceId = ws.createWorkspace.workspace!.id;
  const customer = await t.token(Role.CUSTOMER, rawId(workspaceId));
  const assistant = await t.ok(
    CreateAssistantDocument,
    { input: { workspaceId, name: `${name} assistant` } },
    admin,
  );
  const assistantId = assistant.createAssistant.assistant!.id;
  const conn = await t.ok(
    CreateConnectionDocument,
    { input: { workspaceId, name, ...connection } },
    operator,
  );
  const connectionId = conn.createConnection.connection!.id;
  const listed = await t.ok(ConnectionOperationsDocument, { id: connectionId }, admin);
  for (const op of listed.connection!.operations.nodes) {
    if (!op.enabled) await t.ok(EnableDocument, { input: { operationId: op.id } }, operator);
  }
  const again = await t.ok(ConnectionOperationsDocument, { id: connectionId }, admin);
  const ops = Object.fromEntries(
    again.connection!.operations.nodes.map((o) => [o.name, { id: o.id, key: o.key, enabled: o.enabled }]),
  );
  return { admin, operator, runtime, customer, workspaceId, assistantId, connectionId, ops };
}

export async function connectTools(t: TestApp, w: World, enabled = true): Promise<void> {
  const res = await t.ok(
    SetConnectedToolsDocument,
    { input: { assistantId: w.assistantId, connectionId: w.connectionId, enabled } },
    w.customer,
  );
  if (res.setConnectedTools.userErrors.length)
    throw new Error(JSON.stringify(res.setConnectedTools.userErrors));
}

export async function begin(t: TestApp, w: World, conversationId = 'conv-1') {
  return (await t.ok(BeginTurnDocument, { input: { assistantId: w.assistantId, conversationId } }, w.runtime))
    .beginTurn;
}

export async function call(
  t: TestApp,
  w: World,
  turnId: string,
  name: string,
  args: Record<string, unknown> = {},
) {
  return (await t.ok(CallToolDocument, { input: { turnId, name, arguments: args } }, w.runtime)).callTool;
}
