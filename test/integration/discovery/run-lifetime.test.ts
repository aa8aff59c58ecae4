/**
 * A discovery run always ends: a slow source or a held lock ends it at its deadline, and runs left
 * RUNNING by an instance that died are closed when an instance starts.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionOperationsDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
  DiscoveryRunsDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import {
  acceptNotification,
  initializeResult,
  sendJson,
  startRawServer,
  type RawServerHandle,
} from '../../support/mcp-servers.js';
import { sleep } from '../../support/turns.js';
import { FakeClock } from '../../support/fake-clock.js';
import { waitUntil } from '../../support/wait.js';

let t: TestApp;
/** The app's clock: the run deadline is moved past by hand (PostgreSQL's lock waits stay real). */
const clock = new FakeClock();
let server: RawServerHandle;
let admin: string;
let workspaceId: string;
let listDelayMs = 0;
let tools = [{ name: 'first', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }];

beforeAll(async () => {
  t = await startTestApp({ env: { DISCOVERY_DEADLINE_MS: '1500' }, clock });
  server = await startRawServer(async (req, res) => {
    if (req.httpMethod === 'DELETE') return void res.writeHead(405).end();
    if (acceptNotification(req, res)) return;
    if (req.method === 'initialize')
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult() });
    if (listDelayMs > 0) await sleep(listDelayMs);
    sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools } });
  });
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Lifetime' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
});

afterAll(async () => {
  await t.stop();
  await server.close();
});

async function connect(name: string): Promise<string> {
  listDelayMs = 0;
  const created = await t.ok(
    CreateConnectionDocument,
    { input: { workspaceId, kind: 'MCP', name, endpointUrl: server.url } },
    admin,
  );
  expect(created.createConnection.discoveryRun?.outcome).toBe('SUCCEEDED');
  return created.createConnection.connection!.id;
}

async function operationNames(connectionId: string): Promise<string[]> {
  const data = await t.ok(ConnectionOperationsDocument, { id: connectionId }, admin);
  return data.connection!.operations.nodes.map((o) => o.name).sort();
}

describe('the discovery deadline', () => {
  it('should fail a run whose source is slower than the deadline, changing nothing', async () => {
    const connectionId = await connect('Slow');
    tools = [{ name: 'second', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }];
    listDelayMs = 4_000;
    const asked = server.requests.length;
    const pending = t.ok(DiscoverDocument, { input: { connectionId } }, admin);
    // The source holds its first answer: the run's deadline, not the source, ends the run.
    await waitUntil(() => server.requests.length > asked);
    await clock.advance(1_499);
    expect(server.requests.length).toBe(asked + 1);
    await clock.advance(1);
    const result = await pending;
    expect(result.discover.run).toMatchObject({
      outcome: 'FAILED',
      errorCode: 'DISCOVERY_DEADLINE_EXCEEDED',
    });
    expect(result.discover.run!.finishedAt).not.toBeNull();
    expect(await operationNames(connectionId)).toEqual(['first']);
    listDelayMs = 0;
    tools = [{ name: 'first', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }];
  });

  it('should fail a run whose connection row is locked past the deadline, and let go of the lock wait', async () => {
    const connectionId = await connect('Locked');
    const outside = new pg.Client({ connectionString: t.config.databaseUrl! });
    await outside.connect();
    try {
      await outside.query('begin');
      await outside.query('select 1 from connection where id = $1 for no key update', [rawId(connectionId)]);
      const result = await t.ok(DiscoverDocument, { input: { connectionId } }, admin);
      expect(result.discover.run).toMatchObject({
        outcome: 'FAILED',
        errorCode: 'DISCOVERY_DEADLINE_EXCEEDED',
      });
      // Nothing of the run waits on the lock any more.
      const waiting = await outside.query(
        `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
          where not l.granted and a.datname = current_database()`,
      );
      expect(waiting.rows[0].n).toBe(0);
    } finally {
      await outside.query('rollback');
      await outside.end();
    }
  });
});

describe('runs left RUNNING by a stopped instance', () => {
  it('should close the runs of dead instances at start and leave the runs of live ones', async () => {
    const connectionId = await connect('Crashed');
    const db = new pg.Client({ connectionString: t.config.databaseUrl! });
    await db.connect();
    const insert = (id: string, instanceId: string | null) =>
      db.query(
        `insert into discovery_run (id, connection_id, trigger, actor, started_at, outcome, skipped, diagnostics, instance_id)
         values ($1, $2, 'REDISCOVER', 'test', now(), 'RUNNING', '[]', '[]', $3)`,
        [id, rawId(connectionId), instanceId],
      );
    const dead = '01900000-0000-7000-8000-000000000001';
    const legacy = '01900000-0000-7000-8000-000000000002';
    const live = '01900000-0000-7000-8000-000000000003';
    await insert(dead, '5a0c7b4e-0000-4000-8000-00000000dead');
    await insert(legacy, null);
    await insert(live, t.app.services.notifier.instanceId);
    await db.end();

    const second = await startTestApp({ databaseUrl: t.config.databaseUrl! });
    try {
      const runs = await t.ok(DiscoveryRunsDocument, { id: connectionId, first: 100 }, admin);
      const byId = new Map(runs.connection!.discoveryRuns.nodes.map((r) => [rawId(r.id), r]));
      for (const id of [dead, legacy]) {
        expect(byId.get(id)).toMatchObject({ outcome: 'FAILED', errorCode: 'DISCOVERY_INTERRUPTED' });
        expect(byId.get(id)!.finishedAt).not.toBeNull();
      }
      expect(byId.get(live)).toMatchObject({ outcome: 'RUNNING', errorCode: null });
    } finally {
      await second.stop();
    }
  });
});
