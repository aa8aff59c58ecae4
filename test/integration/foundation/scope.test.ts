import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  NodeDocument,
  ViewerDocument,
  WorkspaceConnectionsDocument,
  WorkspaceDocument,
  WorkspacesDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';

let t: TestApp;
let admin: string;
let customerA: string;
const ids = { workspaceA: '', workspaceB: '', connectionA: '', connectionB: '' };

function rawId(globalId: string): string {
  return Buffer.from(globalId, 'base64url').toString().split(':')[1]!;
}

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  for (const key of ['A', 'B'] as const) {
    const ws = await t.ok(CreateWorkspaceDocument, { input: { name: `Workspace ${key}` } }, admin);
    const workspaceId = ws.createWorkspace.workspace!.id;
    const conn = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId,
          kind: 'MCP',
          name: `Tools ${key}`,
          endpointUrl: 'https://tools.example.com/mcp',
        },
      },
      admin,
    );
    ids[`workspace${key}`] = workspaceId;
    ids[`connection${key}`] = conn.createConnection.connection!.id;
  }
  customerA = await t.token(Role.CUSTOMER, rawId(ids.workspaceA));
});

afterAll(async () => {
  await t.stop();
});

describe('workspace scope', () => {
  it("should give a customer NOT_FOUND for another workspace's connection by node(id)", async () => {
    const result = await t.gql(NodeDocument, { id: ids.connectionB }, customerA);
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(result.data?.node ?? null).toBeNull();
  });

  it("should give a customer NOT_FOUND for another workspace's connection by connection(id)", async () => {
    const result = await t.gql(ConnectionDocument, { id: ids.connectionB }, customerA);
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(result.errors?.[0]?.message).toBe('connection not found');
  });

  it('should give the same answer for a workspace that exists elsewhere as for one that does not', async () => {
    const other = await t.gql(WorkspaceDocument, { id: ids.workspaceB }, customerA);
    const missing = await t.gql(
      WorkspaceDocument,
      { id: Buffer.from('Workspace:00000000-0000-7000-8000-000000000000').toString('base64url') },
      customerA,
    );
    expect(other.errors?.[0]).toEqual(missing.errors?.[0]);
  });

  it("should show a customer its own workspace's connection", async () => {
    const own = await t.ok(ConnectionDocument, { id: ids.connectionA }, customerA);
    expect(own.connection!.name).toBe('Tools A');
    const node = await t.ok(NodeDocument, { id: ids.connectionA }, customerA);
    expect(node.node).toMatchObject({ __typename: 'Connection', name: 'Tools A' });
  });

  it('should list only the customer’s own workspace', async () => {
    const list = await t.ok(WorkspacesDocument, { first: 100 }, customerA);
    expect(list.workspaces.nodes.map((w) => w.id)).toEqual([ids.workspaceA]);
    const viewer = await t.ok(ViewerDocument, {}, customerA);
    expect(viewer.viewer.workspace?.id).toBe(ids.workspaceA);
  });

  it('should page workspaces with opaque cursors and refuse first over 100', async () => {
    const first = await t.ok(WorkspacesDocument, { first: 1 }, admin);
    expect(first.workspaces.nodes).toHaveLength(1);
    expect(first.workspaces.pageInfo.hasNextPage).toBe(true);
    const next = await t.ok(
      WorkspacesDocument,
      { first: 1, after: first.workspaces.pageInfo.endCursor },
      admin,
    );
    expect(next.workspaces.nodes[0]!.id).not.toBe(first.workspaces.nodes[0]!.id);
    const tooMany = await t.gql(WorkspacesDocument, { first: 101 }, admin);
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const badCursor = await t.gql(WorkspacesDocument, { first: 1, after: 'not-a-cursor!' }, admin);
    expect(badCursor.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('should give NOT_FOUND for a malformed or wrongly typed ID', async () => {
    const malformed = await t.gql(ConnectionDocument, { id: 'nonsense' }, admin);
    expect(malformed.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const wrongType = await t.gql(ConnectionDocument, { id: ids.workspaceA }, admin);
    expect(wrongType.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it("should not let a customer page into another workspace's connections", async () => {
    const result = await t.gql(WorkspaceConnectionsDocument, { id: ids.workspaceB, first: 10 }, customerA);
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
