import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
  EnableDocument,
  ConnectionOperationsDocument,
  OperationReviewsDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { sendJson, startLegacyPeer, type RawServerHandle } from '../../support/mcp-servers.js';
import { holdLock } from '../../support/locks.js';

let t: TestApp;
let server: RawServerHandle;
let properties: Record<string, unknown> = { a: { type: 'string' } };

beforeAll(async () => {
  t = await startTestApp();
  server = await startLegacyPeer((req, res) => {
    sendJson(res, 200, {
      jsonrpc: '2.0',
      id: req.id,
      result: { tools: [{ name: 'w', inputSchema: { type: 'object', properties } }] },
    });
  });
});

afterAll(async () => {
  await t.stop();
  await server.close();
});

describe('enable racing a discovery that holds the operation back', () => {
  it('should never leave an operation enabled with open review reasons', async () => {
    const admin = await t.token(Role.ADMIN);
    const operator = await t.token(Role.OPERATOR);
    const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Race' } }, admin);
    const created = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId: ws.createWorkspace.workspace!.id,
          kind: 'MCP',
          name: 'Racy',
          endpointUrl: server.url,
        },
      },
      admin,
    );
    const connectionId = created.createConnection.connection!.id;
    const ops = await t.ok(ConnectionOperationsDocument, { id: connectionId }, admin);
    const opId = ops.connection!.operations.nodes[0]!.id;
    expect(ops.connection!.operations.nodes[0]!.enabled).toBe(false); // a WRITE tool starts off

    // An outside transaction holds the operation's row, so both writers queue behind it:
    // the discovery first, the operator's enable second.
    // Each is seen waiting in PostgreSQL's lock queue before the next one starts.
    const outside = await holdLock(
      t.config.databaseUrl!,
      'select 1 from operation where id = $1 for update',
      [rawId(opId)],
    );
    properties = { a: { type: 'string' }, b: { type: 'string' } };
    const discovery = t.gql(DiscoverDocument, { input: { connectionId } }, admin);
    await outside.waiters(1);
    const enable = t.gql(EnableDocument, { input: { operationId: opId } }, operator);
    await outside.waiters(2);
    await outside.release();

    expect((await discovery).data?.discover.run?.flagged).toBe(1);
    const enabled = await enable;
    expect(enabled.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const after = await t.ok(OperationReviewsDocument, { id: opId }, admin);
    expect(after.operation).toMatchObject({ enabled: false, needsReview: true });
    expect(after.operation!.reviewReasons.nodes.map((r) => [r.code, r.detail, r.resolvedAt])).toEqual([
      ['ARGUMENTS_ADDED', 'b', null],
    ]);
  });
});
