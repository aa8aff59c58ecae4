import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionDocument,
  CreateAssistantDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DeleteConnectionDocument,
  NodeDocument,
  UpdateConnectionDocument,
  ViewerDocument,
  WorkspaceDocument,
  WorkspacesDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';

type Who = 'ADMIN' | 'OPERATOR' | 'CUSTOMER' | 'RUNTIME' | 'ANONYMOUS';
type Expect = 'ok' | 'FORBIDDEN' | 'UNAUTHENTICATED';

let t: TestApp;
const tokens: Partial<Record<Who, string | null>> = {};
let workspaceId: string;
let connectionId: string;

beforeAll(async () => {
  t = await startTestApp();
  const admin = await t.token(Role.ADMIN);
  const created = await t.ok(CreateWorkspaceDocument, { input: { name: 'Access matrix' } }, admin);
  workspaceId = created.createWorkspace.workspace!.id;
  const conn = await t.ok(
    CreateConnectionDocument,
    {
      input: { workspaceId, kind: 'MCP', name: 'Matrix tools', endpointUrl: 'https://tools.example.com/mcp' },
    },
    admin,
  );
  connectionId = conn.createConnection.connection!.id;
  const rawWorkspace = Buffer.from(workspaceId, 'base64url').toString().split(':')[1]!;
  tokens.ADMIN = admin;
  tokens.OPERATOR = await t.token(Role.OPERATOR);
  tokens.CUSTOMER = await t.token(Role.CUSTOMER, rawWorkspace);
  tokens.RUNTIME = await t.token(Role.RUNTIME);
  tokens.ANONYMOUS = null;
});

afterAll(async () => {
  await t.stop();
});

interface Case {
  name: string;
  run: (token: string | null) => Promise<{ errors?: { extensions?: { code?: string } }[] }>;
  expected: Record<Who, Expect>;
}

const everyone: Record<Who, Expect> = {
  ADMIN: 'ok',
  OPERATOR: 'ok',
  CUSTOMER: 'ok',
  RUNTIME: 'ok',
  ANONYMOUS: 'UNAUTHENTICATED',
};
const readers: Record<Who, Expect> = { ...everyone, RUNTIME: 'FORBIDDEN' };
const staff: Record<Who, Expect> = { ...readers, CUSTOMER: 'FORBIDDEN' };

const cases: Case[] = [
  // The console's viewer query selects the workspace, which RUNTIME may not read (its role and
  // label alone it may: test/integration/secrets/runtime-scope.test.ts).
  { name: 'viewer', run: (tok) => t.gql(ViewerDocument, {}, tok), expected: readers },
  { name: 'workspaces', run: (tok) => t.gql(WorkspacesDocument, {}, tok), expected: readers },
  {
    name: 'workspace(id)',
    run: (tok) => t.gql(WorkspaceDocument, { id: workspaceId }, tok),
    expected: readers,
  },
  {
    name: 'connection(id)',
    run: (tok) => t.gql(ConnectionDocument, { id: connectionId }, tok),
    expected: readers,
  },
  { name: 'node(id)', run: (tok) => t.gql(NodeDocument, { id: connectionId }, tok), expected: readers },
  {
    name: 'createWorkspace',
    run: (tok) => t.gql(CreateWorkspaceDocument, { input: { name: 'x' } }, tok),
    expected: staff,
  },
  {
    name: 'createAssistant',
    run: (tok) => t.gql(CreateAssistantDocument, { input: { workspaceId, name: 'a' } }, tok),
    expected: staff,
  },
  {
    name: 'createConnection',
    run: (tok) =>
      t.gql(
        CreateConnectionDocument,
        {
          input: {
            workspaceId,
            kind: 'MCP',
            name: `c ${Math.random()}`,
            endpointUrl: 'https://a.example.com/mcp',
          },
        },
        tok,
      ),
    expected: staff,
  },
  {
    name: 'updateConnection',
    run: (tok) => t.gql(UpdateConnectionDocument, { input: { connectionId, name: 'Matrix tools' } }, tok),
    expected: staff,
  },
  {
    name: 'deleteConnection (of a connection made for the call)',
    run: async (tok) => {
      const made = await t.ok(
        CreateConnectionDocument,
        {
          input: {
            workspaceId,
            kind: 'MCP',
            name: `d ${Math.random()}`,
            endpointUrl: 'https://d.example.com/mcp',
          },
        },
        tokens.ADMIN,
      );
      return t.gql(
        DeleteConnectionDocument,
        { input: { connectionId: made.createConnection.connection!.id } },
        tok,
      );
    },
    expected: staff,
  },
];

const rows = cases.flatMap((c) =>
  (Object.keys(c.expected) as Who[]).map((who) => ({
    name: c.name,
    who,
    expected: c.expected[who],
    run: c.run,
  })),
);

describe('role access', () => {
  it.each(rows)('$name as $who → $expected', async ({ who, expected, run }) => {
    const result = await run(tokens[who] ?? null);
    if (expected === 'ok') {
      expect(result.errors ?? []).toEqual([]);
    } else {
      expect(result.errors?.[0]?.extensions?.code).toBe(expected);
    }
  });

  it('should refuse a token that does not exist with UNAUTHENTICATED', async () => {
    const result = await t.gql(ViewerDocument, {}, 'ctk_not-a-real-token');
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
