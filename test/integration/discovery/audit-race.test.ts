/**
 * Audit follows state: every switch and risk change runs under the operation's row lock, so the
 * newest audit event always agrees with the operation, and a call that changes nothing writes no
 * audit row, however the calls race.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClearRiskDocument,
  ConnectionOperationsDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DisableDocument,
  EnableDocument,
  SetRiskDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { sendJson, startLegacyPeer, type RawServerHandle } from '../../support/mcp-servers.js';

let t: TestApp;
let server: RawServerHandle;
let db: pg.Client;
let admin: string;
let operationId: string;
let operationUuid: string;

beforeAll(async () => {
  t = await startTestApp();
  server = await startLegacyPeer((req, res) => {
    sendJson(res, 200, {
      jsonrpc: '2.0',
      id: req.id,
      result: {
        tools: [{ name: 'r', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }],
      },
    });
  });
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Audit race' } }, admin);
  const created = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId: ws.createWorkspace.workspace!.id,
        kind: 'MCP',
        name: 'Audited',
        endpointUrl: server.url,
      },
    },
    admin,
  );
  const ops = await t.ok(
    ConnectionOperationsDocument,
    { id: created.createConnection.connection!.id },
    admin,
  );
  operationId = ops.connection!.operations.nodes[0]!.id;
  db = new pg.Client({ connectionString: t.config.databaseUrl! });
  await db.connect();
  operationUuid = Buffer.from(operationId, 'base64url').toString('utf8').split(':')[1]!;
});

afterAll(async () => {
  await db?.end();
  await t?.stop();
  await server?.close();
});

async function auditRows(): Promise<{ action: string; after: { enabled?: boolean; risk?: string } }[]> {
  const res = await db.query<{ action: string; after: { enabled?: boolean; risk?: string } }>(
    `select action, after from audit_event where target_type = 'Operation' and target_id = $1 order by created_at, id`,
    [operationId],
  );
  return res.rows;
}

async function state(): Promise<{ enabled: boolean; risk: string }> {
  const res = await db.query<{ enabled: boolean; risk: string }>(
    'select enabled, risk from operation where id = $1',
    [operationUuid],
  );
  return res.rows[0]!;
}

describe('audit under races', () => {
  it('should leave the newest audit event agreeing with the state after 20 parallel enables and disables, every round', async () => {
    for (let round = 0; round < 6; round++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? t.ok(EnableDocument, { input: { operationId } }, admin)
            : t.ok(DisableDocument, { input: { operationId, reason: `round ${round}` } }, admin),
        ),
      );
      const rows = await auditRows();
      const newest = rows.filter((r) => r.action === 'ENABLE' || r.action === 'DISABLE').at(-1)!;
      expect(newest.after.enabled).toBe((await state()).enabled);
      // Each row is a change: ENABLE and DISABLE alternate, never twice in a row.
      const switches = rows
        .filter((r) => r.action === 'ENABLE' || r.action === 'DISABLE')
        .map((r) => r.action);
      for (let i = 1; i < switches.length; i++) expect(switches[i]).not.toBe(switches[i - 1]);
    }
  });

  it('should write one audit row for ten identical disables, and none for a disable of what is off', async () => {
    await t.ok(EnableDocument, { input: { operationId } }, admin);
    const before = (await auditRows()).length;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        t.ok(DisableDocument, { input: { operationId, reason: 'incident' } }, admin),
      ),
    );
    const rows = await auditRows();
    expect(rows.length - before).toBe(1);
    expect(rows.at(-1)!.action).toBe('DISABLE');
    expect((await state()).enabled).toBe(false);
  });

  it('should write one audit row for ten identical risk changes, and one for the clear', async () => {
    const before = (await auditRows()).length;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        t.ok(SetRiskDocument, { input: { operationId, risk: 'WRITE' } }, admin),
      ),
    );
    await Promise.all(
      Array.from({ length: 5 }, () => t.ok(ClearRiskDocument, { input: { operationId } }, admin)),
    );
    const added = (await auditRows()).slice(before).map((r) => r.action);
    expect(added).toEqual(['SET_RISK', 'CLEAR_RISK']);
    expect((await state()).risk).toBe('READ');
  });
});
