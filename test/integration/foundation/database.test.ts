import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Operation } from '../../../src/operations/operation.entity.js';
import { RiskLevel } from '../../../src/operations/types.js';
import { Connection, ConnectionKind } from '../../../src/connections/connection.entity.js';
import { Workspace } from '../../../src/workspaces/workspace.entity.js';
import { WorkspaceConnectionsDocument } from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { toGlobalId } from '../../../src/graphql/node.js';

let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
});

afterAll(async () => {
  await t.stop();
});

describe('ledger_entry', () => {
  it('should refuse UPDATE, DELETE and TRUNCATE', async () => {
    const conn = t.app.services.orm.em.getConnection();
    const id = randomUUID();
    await conn.execute(
      `insert into ledger_entry (id, workspace_id, assistant_id, turn_id, turn_call_id, operation_key, arguments, status, attempts, created_at)
       values (?, ?, ?, ?, ?, 'connector.x.y', '{}', 'SUCCEEDED', 1, now())`,
      [id, randomUUID(), randomUUID(), randomUUID(), randomUUID()],
    );
    await expect(conn.execute(`update ledger_entry set attempts = 2 where id = ?`, [id])).rejects.toThrow(
      /append-only: UPDATE/,
    );
    await expect(conn.execute(`delete from ledger_entry where id = ?`, [id])).rejects.toThrow(
      /append-only: DELETE/,
    );
    await expect(conn.execute(`truncate ledger_entry`)).rejects.toThrow(/append-only: TRUNCATE/);
    const rows = await conn.execute<{ attempts: number }[]>(
      `select attempts from ledger_entry where id = ?`,
      [id],
    );
    expect(rows).toEqual([{ attempts: 1 }]);
  });
});

describe('ledger_outcome', () => {
  it('should refuse UPDATE, DELETE and TRUNCATE, and a second outcome for one intent', async () => {
    const conn = t.app.services.orm.em.getConnection();
    const id = randomUUID();
    const intent = randomUUID();
    await conn.execute(
      `insert into ledger_outcome (id, ledger_entry_id, workspace_id, status, attempts, closed_by, created_at)
       values (?, ?, ?, 'SUCCEEDED', 1, 'CALL', now())`,
      [id, intent, randomUUID()],
    );
    await expect(conn.execute(`update ledger_outcome set attempts = 2 where id = ?`, [id])).rejects.toThrow(
      /ledger_outcome is append-only: UPDATE/,
    );
    await expect(conn.execute(`delete from ledger_outcome where id = ?`, [id])).rejects.toThrow(
      /ledger_outcome is append-only: DELETE/,
    );
    await expect(conn.execute(`truncate ledger_outcome`)).rejects.toThrow(/append-only: TRUNCATE/);
    await expect(
      conn.execute(
        `insert into ledger_outcome (id, ledger_entry_id, workspace_id, status, attempts, closed_by, created_at)
         values (?, ?, ?, 'OUTCOME_UNKNOWN', 0, 'SWEEP', now())`,
        [randomUUID(), intent, randomUUID()],
      ),
    ).rejects.toThrow(/ledger_outcome_ledger_entry_id_unique/);
  });
});

describe('connections { operations } page', () => {
  async function seed(count: number): Promise<string> {
    const em = t.app.services.orm.em.fork();
    const workspace = new Workspace(`Loader ${count}`);
    em.persist(workspace);
    for (let i = 0; i < count; i++) {
      const c = new Connection(
        em.getReference(Workspace, workspace.id, { wrapped: true }),
        ConnectionKind.MCP,
        `c${i}`,
        `c${i}`,
      );
      c.endpointUrl = 'https://example.com/mcp';
      em.persist(c);
      for (let j = 0; j < 3; j++) {
        em.persist(
          new Operation({
            workspace: em.getReference(Workspace, workspace.id, { wrapped: true }),
            connection: em.getReference(Connection, c.id, { wrapped: true }),
            key: `connector.c${i}.op${j}`,
            name: `op${j}`,
            inputSchema: { type: 'object' },
            risk: RiskLevel.READ,
            enabled: true,
          }),
        );
      }
    }
    await em.flush();
    return toGlobalId('Workspace', workspace.id);
  }

  async function statementsFor(workspaceId: string, expected: number): Promise<number> {
    // Warm the token cache so that only the page's own statements are counted.
    await t.ok(WorkspaceConnectionsDocument, { id: workspaceId, first: 1, opsFirst: 1 }, admin);
    t.resetQueries();
    const data = await t.ok(
      WorkspaceConnectionsDocument,
      { id: workspaceId, first: 100, opsFirst: 2 },
      admin,
    );
    const count = t.queries.length;
    expect(data.workspace!.connections.nodes).toHaveLength(expected);
    for (const node of data.workspace!.connections.nodes) {
      expect(node.operations.nodes).toHaveLength(2);
      expect(node.operations.pageInfo.hasNextPage).toBe(true);
    }
    return count;
  }

  it('should cost the same number of SQL statements for 1 connection as for 50', async () => {
    const one = await statementsFor(await seed(1), 1);
    const fifty = await statementsFor(await seed(50), 50);
    expect(one).toBeGreaterThan(0);
    expect(fifty).toBe(one);
  });
});
