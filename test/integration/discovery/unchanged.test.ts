/**
 * A re-discovery of an unchanged source does nothing (issue 15): no conversion, and no write
 * beyond the run's own record (the run, its audit row, the connection's `lastDiscoveryAt`). And it
 * does the full work whenever anything the result depends on moved: the source (on any page of an
 * MCP listing), a setting, the converter's version, or the operations themselves (an admin's
 * change of review state, risk, or a deleted operation), or a failed run in between.
 *
 * Writes are observed through PostgreSQL's `xmin` of each operation and review-reason row (any
 * update or re-insert changes it), the conversion through a spy on the description pool.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { Connection } from '../../../src/connections/connection.entity.js';
import {
  ConnectionOperationsDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DisableDocument,
  DiscoverDocument,
  EnableDocument,
  SetRiskDocument,
  UpdateConnectionDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';

let t: TestApp;
let admin: string;
let workspaceId: string;
let server: Server;
let base: string;
let doc: Record<string, unknown> | null;

const op = (operationId: string, extra: Record<string, unknown> = {}) => ({
  operationId,
  summary: operationId,
  responses: { '200': { description: 'ok' } },
  ...extra,
});

function description(paths: Record<string, unknown>): Record<string, unknown> {
  return { openapi: '3.0.3', info: { title: 'Pets', version: '1' }, servers: [{ url: '/api' }], paths };
}

const v1 = description({
  '/pets': { get: op('listPets'), post: op('addPet') },
  '/pets/{petId}': {
    get: op('getPet', {
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
    }),
  },
});

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Unchanged discovery' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
  server = createServer((_req, res) => {
    if (doc === null) {
      res.writeHead(503).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  vi.restoreAllMocks();
  await t.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** Each operation's and each review reason's row version: it changes with any write to the row. */
async function rowVersions(connectionId: string): Promise<Record<string, string>> {
  const rows = await t.app.services.orm.em.fork().execute<{ id: string; xmin: string }[]>(
    `select o.id, o.xmin::text as xmin from operation o where o.connection_id = ?
     union all
     select r.id, r.xmin::text from review_reason r join operation o on o.id = r.operation_id where o.connection_id = ?`,
    [rawId(connectionId), rawId(connectionId)],
  );
  return Object.fromEntries(rows.map((r) => [r.id, r.xmin]));
}

async function operations(connectionId: string) {
  const data = await t.ok(ConnectionOperationsDocument, { id: connectionId }, admin);
  return Object.fromEntries(data.connection!.operations.nodes.map((o) => [o.name, o]));
}

async function discover(connectionId: string) {
  const { discover: result } = await t.ok(DiscoverDocument, { input: { connectionId } }, admin);
  expect(result.userErrors).toEqual([]);
  return { run: result.run!, changedOperations: result.changedOperations };
}

describe('re-discovery of an unchanged OpenAPI description', () => {
  let connectionId: string;
  let convertSpy: MockInstance;
  const converted = () => convertSpy.mock.calls.length;

  beforeAll(async () => {
    convertSpy = vi.spyOn(t.app.services.descriptions, 'convert');
    doc = v1;
    const created = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId,
          kind: 'OPENAPI',
          name: 'Unchanged pets',
          descriptionUrl: `${base}/openapi.json`,
          endpointUrl: null,
        },
      },
      admin,
    );
    connectionId = created.createConnection.connection!.id;
    expect(created.createConnection.discoveryRun).toMatchObject({
      outcome: 'SUCCEEDED',
      added: 3,
      unchanged: false,
    });
  });

  it('should neither convert nor write an operation, and still record the run', async () => {
    const versions = await rowVersions(connectionId);
    const before = await operations(connectionId);
    const calls = converted();
    const em = t.app.services.orm.em.fork();
    const lastBefore = (await em.findOneOrFail(Connection, { id: rawId(connectionId) })).lastDiscoveryAt!;

    const result = await discover(connectionId);

    expect(result.run).toMatchObject({
      outcome: 'SUCCEEDED',
      unchanged: true,
      added: 0,
      removed: 0,
      updated: 0,
    });
    expect(result.changedOperations).toEqual([]);
    expect(converted()).toBe(calls);
    expect(await rowVersions(connectionId)).toEqual(versions);
    expect(await operations(connectionId)).toEqual(before);
    const after = await em.fork().findOneOrFail(Connection, { id: rawId(connectionId) });
    expect(after.lastDiscoveryAt!.getTime()).toBeGreaterThanOrEqual(lastBefore.getTime());
    expect(after.status).toBe('READY');
    // Who ran it is on the audit trail, as for any discovery.
    const [audited] = await em.execute<{ after: { run: string; unchanged?: boolean } }[]>(
      `select after from audit_event where target_id = ? and action = 'DISCOVER' order by id desc limit 1`,
      [connectionId],
    );
    expect(audited!.after).toMatchObject({ run: result.run.id, unchanged: true });
  });

  it('should keep the notes of the run that read the source', async () => {
    const full = await t.app.services.orm.em
      .fork()
      .execute<{ skipped: unknown; diagnostics: unknown }[]>(
        `select skipped, diagnostics from discovery_run where connection_id = ? and outcome = 'SUCCEEDED' and not unchanged order by id desc limit 1`,
        [rawId(connectionId)],
      );
    const result = await discover(connectionId);
    expect(result.run.unchanged).toBe(true);
    expect(result.run.skipped).toEqual(full[0]!.skipped);
    expect(result.run.diagnostics).toEqual(full[0]!.diagnostics);
  });

  it('should convert again when the description changed', async () => {
    const calls = converted();
    doc = description({ ...(v1.paths as object), '/owners': { get: op('listOwners') } });
    const result = await discover(connectionId);
    expect(result.run).toMatchObject({ unchanged: false, added: 1 });
    expect(converted()).toBe(calls + 1);
    expect((await discover(connectionId)).run.unchanged).toBe(true);
  });

  it('should not skip after an admin disabled, enabled or set the risk of an operation', async () => {
    const ops = await operations(connectionId);
    const id = ops.listPets!.id;
    for (const change of [
      () => t.ok(DisableDocument, { input: { operationId: id, reason: 'checking' } }, admin),
      () => t.ok(EnableDocument, { input: { operationId: id } }, admin),
      () => t.ok(SetRiskDocument, { input: { operationId: id, risk: 'WRITE' } }, admin),
    ]) {
      await change();
      const calls = converted();
      const result = await discover(connectionId);
      expect(result.run.unchanged).toBe(false);
      expect(converted()).toBe(calls + 1);
      // The full run found nothing to do either, and left a state the next run can skip.
      expect(result.run).toMatchObject({ added: 0, removed: 0, updated: 0 });
      expect((await discover(connectionId)).run.unchanged).toBe(true);
    }
  });

  it('should put back an operation deleted behind its back', async () => {
    const ops = await operations(connectionId);
    await t.app.services.orm.em.fork().execute(`delete from operation where id = ?`, [rawId(ops.getPet!.id)]);
    const result = await discover(connectionId);
    expect(result.run).toMatchObject({ unchanged: false, added: 1 });
    expect(Object.keys(await operations(connectionId))).toContain('getPet');
  });

  it('should convert again once a setting the conversion depends on changed (baseUrl)', async () => {
    await t.ok(
      UpdateConnectionDocument,
      { input: { connectionId, baseUrl: 'https://pets.example.com/v2' } },
      admin,
    );
    const calls = converted();
    const result = await discover(connectionId);
    expect(result.run.unchanged).toBe(false);
    expect(converted()).toBe(calls + 1);
    expect((await discover(connectionId)).run.unchanged).toBe(true);
  });

  it('should convert again when the last run was made by another converter version', async () => {
    // What a run of an older converter left: the same source, another fingerprint.
    await t.app.services.orm.em
      .fork()
      .execute(
        `update discovery_run set fingerprint = md5(fingerprint) where connection_id = ? and outcome = 'SUCCEEDED'`,
        [rawId(connectionId)],
      );
    const calls = converted();
    expect((await discover(connectionId)).run.unchanged).toBe(false);
    expect(converted()).toBe(calls + 1);
  });

  it('should do the full run after a failed one, which puts the connection back to READY', async () => {
    doc = null;
    const failed = await discover(connectionId);
    expect(failed.run.outcome).toBe('FAILED');
    doc = description({ ...(v1.paths as object), '/owners': { get: op('listOwners') } });
    const result = await discover(connectionId);
    expect(result.run).toMatchObject({ outcome: 'SUCCEEDED', unchanged: false });
    const c = await t.app.services.orm.em.fork().findOneOrFail(Connection, { id: rawId(connectionId) });
    expect(c.status).toBe('READY');
    expect(c.lastDiscoveryError).toBeNull();
  });
});

describe('re-discovery of an unchanged MCP tool list', () => {
  let peer: SdkServerHandle;
  let connectionId: string;
  const tools = (last: string): PeerTool[] => [
    { name: 'a', description: 'A', inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } },
    { name: 'b', description: 'B', inputSchema: {}, annotations: { readOnlyHint: true } },
    { name: 'c', description: 'C', inputSchema: {} },
    { name: 'd', description: 'D', inputSchema: {}, annotations: { readOnlyHint: true } },
    { name: 'e', description: last, inputSchema: { z: z.string() }, annotations: { readOnlyHint: true } },
  ];

  beforeAll(async () => {
    // Two tools a page: the last tool is alone on the third page.
    peer = await startSdkServer({ stateful: false, json: true, tools: tools('E'), pageSize: 2 });
    const created = await t.ok(
      CreateConnectionDocument,
      { input: { workspaceId, kind: 'MCP', name: 'Unchanged MCP', endpointUrl: peer.url } },
      admin,
    );
    connectionId = created.createConnection.connection!.id;
    expect(created.createConnection.discoveryRun).toMatchObject({ outcome: 'SUCCEEDED', added: 5 });
  });

  afterAll(async () => {
    await peer.close();
  });

  it('should write no operation when every page lists the same tools', async () => {
    const versions = await rowVersions(connectionId);
    const result = await discover(connectionId);
    expect(result.run).toMatchObject({ outcome: 'SUCCEEDED', unchanged: true });
    expect(result.changedOperations).toEqual([]);
    expect(await rowVersions(connectionId)).toEqual(versions);
  });

  it('should see a change on the last page', async () => {
    peer.setTools(tools('E, now described otherwise'));
    const result = await discover(connectionId);
    expect(result.run).toMatchObject({ unchanged: false, updated: 1 });
    expect(result.changedOperations.map((o) => o.name)).toEqual(['e']);
    expect((await discover(connectionId)).run.unchanged).toBe(true);
  });
});
