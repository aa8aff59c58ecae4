/**
 * Rename and delete of workspaces and assistants: who may, what a delete takes with it, and the
 * refusal while history exists (turns and the ledger are kept for good). Every change and every
 * refusal leaves an audit row.
 */
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import {
  DeleteAssistantDocument as DELETE_AS,
  DeleteWorkspaceDocument as DELETE_WS,
  RenameAssistantDocument as RENAME_AS,
  RenameWorkspaceDocument as RENAME_WS,
  WorkspaceAndAssistantNamesDocument as NAMES,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';

let t: TestApp;
let admin: string;
let operator: string;
let runtime: string;

const CREATE_WS = `mutation($name: String!) { createWorkspace(input: { name: $name }) { workspace { id } } }`;
const CREATE_AS = `mutation($ws: ID!, $name: String!) { createAssistant(input: { workspaceId: $ws, name: $name }) { assistant { id } } }`;
const BEGIN = `mutation($a: ID!) { beginTurn(input: { assistantId: $a, conversationId: "c-1" }) { turnId } }`;

interface AuditRow {
  action: string;
  actor: string;
  target_id: string;
  before: unknown;
  after: unknown;
}

async function auditRows(workspaceGlobalId: string): Promise<AuditRow[]> {
  return t.app.services.orm.em
    .getConnection()
    .execute<AuditRow[]>(
      `select action, actor, target_id, before, after from audit_event where workspace_id = ? order by id`,
      [rawId(workspaceGlobalId)],
    );
}

async function workspace(name: string): Promise<string> {
  const res = await t.ok<{ createWorkspace: { workspace: { id: string } } }, unknown>(
    CREATE_WS,
    { name },
    admin,
  );
  return res.createWorkspace.workspace.id;
}

async function assistant(ws: string, name: string): Promise<string> {
  const res = await t.ok<{ createAssistant: { assistant: { id: string } } }, unknown>(
    CREATE_AS,
    { ws, name },
    admin,
  );
  return res.createAssistant.assistant.id;
}

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN, null, 'ada admin');
  operator = await t.token(Role.OPERATOR, null, 'olga operator');
  runtime = await t.token(Role.RUNTIME);
});

afterAll(async () => {
  await t.stop();
});

describe('rename', () => {
  it('should rename a workspace and an assistant, trimmed, with an audit row each', async () => {
    const ws = await workspace('Old name');
    const as = await assistant(ws, 'Old assistant');
    const w = await t.ok(RENAME_WS, { id: ws, name: '  New name ' }, operator);
    expect(w.renameWorkspace).toEqual({ workspace: { id: ws, name: 'New name' }, userErrors: [] });
    const a = await t.ok(RENAME_AS, { id: as, name: 'New assistant' }, admin);
    expect(a.renameAssistant).toEqual({ assistant: { id: as, name: 'New assistant' }, userErrors: [] });

    const read = await t.ok(NAMES, { ws, as }, admin);
    expect(read).toEqual({
      workspace: { name: 'New name' },
      assistant: { name: 'New assistant', turns: { nodes: [] } },
    });
    const rows = await auditRows(ws);
    expect(rows.filter((r) => r.action.startsWith('RENAME_'))).toEqual([
      {
        action: 'RENAME_WORKSPACE',
        actor: 'olga operator',
        target_id: ws,
        before: { name: 'Old name' },
        after: { name: 'New name' },
      },
      {
        action: 'RENAME_ASSISTANT',
        actor: 'ada admin',
        target_id: as,
        before: { name: 'Old assistant' },
        after: { name: 'New assistant' },
      },
    ]);
  });

  it('should refuse an empty or overlong name as a user error, changing nothing', async () => {
    const ws = await workspace('Keep me');
    const empty = await t.ok(RENAME_WS, { id: ws, name: '   ' }, admin);
    expect(empty.renameWorkspace).toEqual({
      workspace: null,
      userErrors: [{ field: ['input', 'name'], code: 'REQUIRED', message: 'must not be empty' }],
    });
    const long = await t.ok(RENAME_WS, { id: ws, name: 'x'.repeat(201) }, admin);
    expect(long.renameWorkspace.userErrors[0]?.code).toBe('TOO_LONG');
    expect((await auditRows(ws)).map((r) => r.action)).toEqual(['CREATE_WORKSPACE']);
  });

  it('should be FORBIDDEN to a customer and a runtime, and NOT_FOUND across workspaces', async () => {
    const ws = await workspace('Guarded');
    const other = await workspace('Elsewhere');
    const as = await assistant(ws, 'Guarded assistant');
    const customer = await t.token(Role.CUSTOMER, rawId(ws));
    for (const [doc, id] of [
      [RENAME_WS, ws],
      [RENAME_AS, as],
      [DELETE_WS, ws],
      [DELETE_AS, as],
    ] as const) {
      for (const token of [customer, runtime]) {
        const res = await t.gql(print(doc), { id, name: 'Taken over' }, token);
        expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      }
    }
    const otherCustomer = await t.token(Role.CUSTOMER, rawId(other));
    const res = await t.gql(`query($id: ID!) { assistant(id: $id) { name } }`, { id: as }, otherCustomer);
    expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const names = await t.ok(NAMES, { ws, as }, admin);
    expect(names.workspace?.name).toBe('Guarded');
  });
});

describe('delete', () => {
  it('should delete an assistant without history, with its audit row', async () => {
    const ws = await workspace('Tidy');
    const as = await assistant(ws, 'Short-lived');
    const res = await t.ok(DELETE_AS, { id: as }, operator);
    expect(res.deleteAssistant).toEqual({ deletedAssistantId: as, userErrors: [] });
    const gone = await t.gql(`query($id: ID!) { assistant(id: $id) { name } }`, { id: as }, admin);
    expect(gone.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const begin = await t.gql(BEGIN, { a: as }, runtime);
    expect(begin.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await auditRows(ws)).at(-1)).toMatchObject({
      action: 'DELETE_ASSISTANT',
      actor: 'olga operator',
      target_id: as,
      before: { name: 'Short-lived' },
    });
  });

  it('should refuse to delete an assistant with a recorded turn, keep it, and audit the refusal', async () => {
    const ws = await workspace('Busy');
    const as = await assistant(ws, 'Worker');
    await t.ok(BEGIN, { a: as }, runtime);
    const res = await t.ok(DELETE_AS, { id: as }, admin);
    expect(res.deleteAssistant.deletedAssistantId).toBeNull();
    expect(res.deleteAssistant.userErrors).toEqual([
      {
        field: ['input', 'id'],
        code: 'HAS_HISTORY',
        message: expect.stringContaining('rename it, or switch its connected tools off') as string,
      },
    ]);
    const still = await t.ok(NAMES, { ws, as }, admin);
    expect(still.assistant).toEqual({ name: 'Worker', turns: { nodes: [{ conversationId: 'c-1' }] } });
    expect((await auditRows(ws)).at(-1)).toMatchObject({
      action: 'DELETE_ASSISTANT_REFUSED',
      actor: 'ada admin',
      target_id: as,
    });

    const wsRes = await t.ok(DELETE_WS, { id: ws }, admin);
    expect(wsRes.deleteWorkspace.deletedWorkspaceId).toBeNull();
    expect(wsRes.deleteWorkspace.userErrors[0]?.code).toBe('HAS_HISTORY');
    expect((await auditRows(ws)).at(-1)).toMatchObject({ action: 'DELETE_WORKSPACE_REFUSED' });
  });

  it('should delete a workspace without history with what it owns, and its tokens stop working at once', async () => {
    const ws = await workspace('Gone soon');
    const as = await assistant(ws, 'Gone too');
    const customer = await t.token(Role.CUSTOMER, rawId(ws));
    const before = await t.gql(`{ viewer { role } }`, {}, customer);
    expect(before.data).toEqual({ viewer: { role: 'CUSTOMER' } });

    const res = await t.ok(DELETE_WS, { id: ws }, admin);
    expect(res.deleteWorkspace).toEqual({ deletedWorkspaceId: ws, userErrors: [] });

    const read = await t.gql(
      `query($ws: ID!, $as: ID!) { workspace(id: $ws) { name } assistant(id: $as) { name } }`,
      { ws, as },
      admin,
    );
    expect(read.data).toEqual({ workspace: null, assistant: null });
    const after = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${customer}` },
      body: JSON.stringify({ query: '{ viewer { role } }' }),
    });
    expect(after.status).toBe(401);
    // The audit trail outlives the workspace.
    expect((await auditRows(ws)).map((r) => r.action)).toEqual([
      'CREATE_WORKSPACE',
      'CREATE_ASSISTANT',
      'DELETE_WORKSPACE',
    ]);
  });

  it('should answer NOT_FOUND for a workspace that does not exist', async () => {
    const res = await t.gql(
      DELETE_WS,
      { id: 'V29ya3NwYWNlOjAwMDAwMDAwLTAwMDAtNzAwMC04MDAwLTAwMDAwMDAwMDAwMA' },
      admin,
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
