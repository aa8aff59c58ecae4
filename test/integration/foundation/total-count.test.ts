/**
 * `totalCount` on the lists where it is cheap: one COUNT with the page's own filter, run only when
 * selected, and one statement for a whole page of parents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import {
  BeginTurnDocument,
  CallToolDocument,
  CountsDocument,
  CreateAssistantDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';

const DESCRIPTION = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1' },
  servers: [{ url: 'https://shop.example.com' }],
  paths: {
    '/items': {
      get: { operationId: 'listItems', responses: { '200': { description: 'ok' } } },
      post: { operationId: 'addItem', responses: { '200': { description: 'ok' } } },
    },
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
});

let t: TestApp;
let admin: string;
let customer: string;
let ws: string;
let other: string;
let conn: string;
let turn: string;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  ws = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Counted' } }, admin)).createWorkspace.workspace!
    .id;
  other = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Other' } }, admin)).createWorkspace
    .workspace!.id;
  customer = await t.token(Role.CUSTOMER, rawId(ws));
  const assistants: string[] = [];
  for (const name of ['A', 'B', 'C']) {
    const res = await t.ok(CreateAssistantDocument, { input: { workspaceId: ws, name } }, admin);
    assistants.push(res.createAssistant.assistant!.id);
  }
  await t.ok(CreateAssistantDocument, { input: { workspaceId: other, name: 'D' } }, admin);
  const created = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId: ws,
        kind: 'OPENAPI',
        name: 'Shop',
        descriptionText: DESCRIPTION,
        endpointUrl: null,
      },
    },
    admin,
  );
  conn = created.createConnection.connection!.id;
  const runtime = await t.token(Role.RUNTIME);
  turn = (
    await t.ok(BeginTurnDocument, { input: { assistantId: assistants[0]!, conversationId: 'c' } }, runtime)
  ).beginTurn.turnId;
  for (const name of ['nope', 'nope_again']) {
    await t.ok(CallToolDocument, { input: { turnId: turn, name, arguments: {} } }, runtime);
  }
});

afterAll(async () => {
  await t.stop();
});

describe('totalCount', () => {
  it('should count every match across pages, with the same filter as the page', async () => {
    const res = await t.ok(CountsDocument, { ws, conn, turn }, admin);
    expect(res.workspace).toEqual({
      assistants: { totalCount: 3, pageInfo: { hasNextPage: true } },
      openapi: { totalCount: 1 },
      mcp: { totalCount: 0 },
      reads: { totalCount: 2 },
    });
    expect(res.connection).toEqual({
      operations: { totalCount: 3 },
      enabled: { totalCount: 2 },
      writes: { totalCount: 1, nodes: [] },
      discoveryRuns: { totalCount: 1 },
    });
    expect(res.turn).toEqual({ calls: { totalCount: 2 } });
    expect(res.workspaces.totalCount).toBeGreaterThanOrEqual(2);
  });

  it("should count only the customer's own workspace", async () => {
    const res = await t.ok(CountsDocument, { ws, conn, turn }, customer);
    expect(res.workspaces.totalCount).toBe(1);
    expect(res.workspace?.assistants.totalCount).toBe(3);
  });

  it('should count a page of parents in one statement, and not at all when not selected', async () => {
    const query = (count: boolean) =>
      `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Workspace { assistants(first: 1) { ${count ? 'totalCount' : ''} nodes { id } } } } }`;
    t.resetQueries();
    const res = await t.ok<{ nodes: { assistants: { totalCount: number } }[] }, unknown>(
      query(true),
      { ids: [ws, other] },
      admin,
    );
    expect(res.nodes.map((n) => n.assistants.totalCount)).toEqual([3, 1]);
    expect(t.queries.filter((q) => /count\(\*\)/i.test(q))).toHaveLength(1);
    t.resetQueries();
    await t.ok(query(false), { ids: [ws, other] }, admin);
    expect(t.queries.filter((q) => /count\(\*\)/i.test(q))).toHaveLength(0);
  });
});
