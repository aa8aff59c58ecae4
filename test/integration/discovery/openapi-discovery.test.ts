import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Operation } from '../../../src/operations/operation.entity.js';
import { ReviewReason } from '../../../src/operations/review-reason.entity.js';
import {
  ConnectionOperationsDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer } from '../../support/mcp-servers.js';

let t: TestApp;
let admin: string;
let workspaceId: string;
let server: Server;
let base: string;
let doc: Record<string, unknown>;

function description(paths: Record<string, unknown>): Record<string, unknown> {
  return { openapi: '3.0.3', info: { title: 'Pets', version: '1' }, servers: [{ url: '/api' }], paths };
}

const getPet = {
  operationId: 'getPet',
  summary: 'Get a pet',
  parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
  responses: { '200': { description: 'ok' } },
};
const listPets = {
  operationId: 'listPets',
  summary: 'List pets',
  responses: { '200': { description: 'ok' } },
};

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'OpenAPI discovery' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await t.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function ops(id: string) {
  const data = await t.ok(ConnectionOperationsDocument, { id }, admin);
  return Object.fromEntries(data.connection!.operations.nodes.map((o) => [o.name, o]));
}

describe('OpenAPI discovery served over HTTP', () => {
  let connectionId: string;

  it('should convert the description, resolving the relative server against its address', async () => {
    doc = description({ '/pets': { get: listPets }, '/pets/{petId}': { get: getPet } });
    const created = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId,
          kind: 'OPENAPI',
          name: 'Pet Store',
          descriptionUrl: `${base}/openapi.json`,
          endpointUrl: null,
        },
      },
      admin,
    );
    connectionId = created.createConnection.connection!.id;
    expect(created.createConnection.discoveryRun).toMatchObject({ outcome: 'SUCCEEDED', added: 2 });
    const found = await ops(connectionId);
    expect(found.getPet).toMatchObject({
      key: 'connector.pet_store.get_pet',
      method: 'GET',
      path: '/pets/{petId}',
      risk: 'READ',
      enabled: true,
    });
    const em = t.app.services.orm.em.fork();
    const row = await em.findOneOrFail(Operation, { id: rawId(found.getPet!.id) });
    expect(row.binding?.baseUrl).toBe(`${base}/api`);
  });

  it('should change nothing when the description did not change', async () => {
    const before = await ops(connectionId);
    const result = await t.ok(DiscoverDocument, { input: { connectionId } }, admin);
    expect(result.discover.run).toMatchObject({
      outcome: 'SUCCEEDED',
      added: 0,
      removed: 0,
      updated: 0,
      flagged: 0,
    });
    expect(result.discover.changedOperations).toEqual([]);
    expect(await ops(connectionId)).toEqual(before);
    expect(
      await t.app.services.orm.em
        .fork()
        .count(ReviewReason, { operation: { connection: rawId(connectionId) } }),
    ).toBe(0);
  });

  it('should hold back an operation whose method changed, and one whose path changed', async () => {
    const before = await ops(connectionId);
    doc = description({ '/pets': { post: listPets }, '/animals/{petId}': { get: getPet } });
    const result = await t.ok(DiscoverDocument, { input: { connectionId } }, admin);
    expect(result.discover.run).toMatchObject({ outcome: 'SUCCEEDED', added: 0, removed: 0, flagged: 2 });
    const after = await ops(connectionId);
    expect(after.listPets).toMatchObject({
      enabled: false,
      needsReview: true,
      method: 'POST',
      risk: 'WRITE',
      key: before.listPets!.key,
    });
    expect(after.listPets!.openReasons.nodes).toEqual(
      expect.arrayContaining([
        { code: 'ENDPOINT_CHANGED', detail: 'GET /pets → POST /pets' },
        { code: 'RISK_RAISED', detail: 'READ → WRITE' },
      ]),
    );
    expect(after.getPet).toMatchObject({
      enabled: false,
      needsReview: true,
      path: '/animals/{petId}',
      key: before.getPet!.key,
    });
    expect(after.getPet!.openReasons.nodes).toEqual([
      { code: 'ENDPOINT_CHANGED', detail: 'GET /pets/{petId} → GET /animals/{petId}' },
    ]);
  });
});

describe('the check schema beside the declared one (issue 25, item 7)', () => {
  it('should store, refresh and clear check_schema with the description, leaving input_schema as declared', async () => {
    const withQuery = (schema: Record<string, unknown>) =>
      description({
        '/pets': {
          get: { ...listPets, parameters: [{ name: 'created', in: 'query', schema }] },
        },
      });
    doc = withQuery({ type: 'integer' });
    const created = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId,
          kind: 'OPENAPI',
          name: 'Checked pets',
          descriptionUrl: `${base}/openapi.json`,
          endpointUrl: null,
        },
      },
      admin,
    );
    const id = rawId(created.createConnection.connection!.id);
    const stored = async () =>
      (
        await t.app.services.orm.em
          .fork()
          .getConnection()
          .execute<{ input_schema: unknown; check_schema: unknown }[]>(
            `select input_schema, check_schema from operation where connection_id = ?`,
            [id],
          )
      )[0]!;
    expect((await stored()).check_schema).toBeNull();
    doc = withQuery({ anyOf: [{ type: 'integer' }, { type: 'string', enum: ['today'] }] });
    const widened = await t.ok(
      DiscoverDocument,
      { input: { connectionId: created.createConnection.connection!.id } },
      admin,
    );
    expect(widened.discover.run).toMatchObject({ outcome: 'SUCCEEDED', updated: 1, flagged: 0 });
    const after = await stored();
    expect(after.input_schema).toMatchObject({ properties: { created: { type: 'integer' } } });
    expect(after.check_schema).toMatchObject({
      properties: { created: { anyOf: [{ type: 'integer' }, { type: 'string', enum: ['today'] }] } },
    });
    doc = withQuery({ type: 'integer' });
    await t.ok(DiscoverDocument, { input: { connectionId: created.createConnection.connection!.id } }, admin);
    expect((await stored()).check_schema).toBeNull();
  });
});

describe('an OpenAPI app on an allow-listed http:// host (issue 25, item 6)', () => {
  it('should report no uncallable base address and keep its operations on, as its calls go through', async () => {
    const port = (server.address() as AddressInfo).port;
    // No loopback allowance: the host is reachable over http only through its allow-list entry.
    const strict = await startTestApp({
      env: { OUTBOUND_ALLOW_LOOPBACK: 'false', OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${port}` },
    });
    try {
      const token = await strict.token(Role.ADMIN);
      const ws = await strict.ok(CreateWorkspaceDocument, { input: { name: 'Allow-listed' } }, token);
      doc = {
        openapi: '3.0.3',
        info: { title: 'Inside', version: '1' },
        servers: [{ url: `${base}/api` }],
        paths: { '/pets': { get: listPets } },
      };
      const created = await strict.ok(
        CreateConnectionDocument,
        {
          input: {
            workspaceId: ws.createWorkspace.workspace!.id,
            kind: 'OPENAPI',
            name: 'Inside',
            descriptionUrl: `${base}/openapi.json`,
          },
        },
        token,
      );
      const run = created.createConnection.discoveryRun!;
      expect(run).toMatchObject({ outcome: 'SUCCEEDED', added: 1 });
      expect(run.diagnostics.join('\n')).not.toContain('no callable base address');
      const listed = await strict.ok(
        ConnectionOperationsDocument,
        { id: created.createConnection.connection!.id },
        token,
      );
      expect(listed.connection!.operations.nodes).toMatchObject([
        { name: 'listPets', enabled: true, needsReview: false },
      ]);
    } finally {
      await strict.stop();
    }
  });
});

describe('concurrent discoveries of one connection', () => {
  it('should serialize 10 concurrent discover calls into one set of operations with unique keys', async () => {
    const peer = await startSdkServer({
      stateful: false,
      json: true,
      tools: Array.from({ length: 20 }, (_, i) => ({
        name: `tool_${i}`,
        annotations: { readOnlyHint: true },
      })),
    });
    try {
      const created = await t.ok(
        CreateConnectionDocument,
        { input: { workspaceId, kind: 'MCP', name: 'Busy', endpointUrl: peer.url } },
        admin,
      );
      const id = created.createConnection.connection!.id;
      peer.setTools(
        Array.from({ length: 25 }, (_, i) => ({ name: `tool_${i}`, annotations: { readOnlyHint: true } })),
      );
      const results = await Promise.all(
        Array.from({ length: 10 }, () => t.ok(DiscoverDocument, { input: { connectionId: id } }, admin)),
      );
      // Each run either applied, or found that a run started after it had already applied.
      for (const r of results) {
        expect(r.discover.run!.outcome === 'SUCCEEDED' || r.discover.run!.errorCode === 'SUPERSEDED').toBe(
          true,
        );
      }
      expect(results.some((r) => r.discover.run!.outcome === 'SUCCEEDED')).toBe(true);
      expect(results.reduce((sum, r) => sum + r.discover.run!.added, 0)).toBe(5);
      const em = t.app.services.orm.em.fork();
      const rows = await em.find(Operation, { connection: rawId(id) });
      expect(rows).toHaveLength(25);
      expect(new Set(rows.map((r) => r.key)).size).toBe(25);
      expect(new Set(rows.map((r) => r.name)).size).toBe(25);
    } finally {
      await peer.close();
    }
  });
});
