import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Operation } from '../../../src/operations/operation.entity.js';
import {
  ConnectionOperationsDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { sendJson, startLegacyPeer, type RawServerHandle } from '../../support/mcp-servers.js';

let t: TestApp;
let admin: string;
let workspaceId: string;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Failures' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
});

afterAll(async () => {
  await t.stop();
});

const tool = (name: string) => ({
  name,
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
});

/** A raw MCP server whose tools/list behaviour the test switches. */
async function pagedServer(): Promise<{
  server: RawServerHandle;
  mode: { value: 'ok' | 'page2-500' | 'empty' };
}> {
  const mode = { value: 'ok' as 'ok' | 'page2-500' | 'empty' };
  const server = await startLegacyPeer((req, res) => {
    if (req.method === 'tools/list') {
      const cursor = (req.body as { params?: { cursor?: string } }).params?.cursor;
      if (mode.value === 'empty')
        return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools: [] } });
      if (cursor === undefined)
        return sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          result: { tools: [tool('a'), tool('b')], nextCursor: 'p2' },
        });
      if (mode.value === 'page2-500') return sendJson(res, 500, { error: 'boom' });
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools: [tool('c')] } });
    }
    sendJson(res, 200, { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'no' } });
  });
  return { server, mode };
}

async function names(connectionId: string): Promise<string[]> {
  const data = await t.ok(ConnectionOperationsDocument, { id: connectionId }, admin);
  return data.connection!.operations.nodes.map((o) => `${o.name}:${o.key}:${o.enabled}`).sort();
}

describe('a failure midway changes nothing', () => {
  it('should keep every operation when page 2 of tools/list answers 500, and say why', async () => {
    const { server, mode } = await pagedServer();
    try {
      const created = await t.ok(
        CreateConnectionDocument,
        { input: { workspaceId, kind: 'MCP', name: 'Paged', endpointUrl: server.url } },
        admin,
      );
      const id = created.createConnection.connection!.id;
      const before = await names(id);
      expect(before).toHaveLength(3);
      mode.value = 'page2-500';
      const result = await t.ok(DiscoverDocument, { input: { connectionId: id } }, admin);
      expect(result.discover.run).toMatchObject({ outcome: 'FAILED', errorCode: 'UPSTREAM_HTTP_ERROR' });
      expect(await names(id)).toEqual(before);
      const conn = await t.ok(ConnectionOperationsDocument, { id }, admin);
      expect(conn.connection!.status).toBe('FAILED');
      expect(conn.connection!.lastDiscoveryError).toMatch(/^UPSTREAM_HTTP_ERROR/);
      mode.value = 'empty';
      const empty = await t.ok(DiscoverDocument, { input: { connectionId: id } }, admin);
      expect(empty.discover.run).toMatchObject({ outcome: 'FAILED', errorCode: 'EMPTY_TOOL_LIST' });
      expect(await names(id)).toEqual(before);
      mode.value = 'ok';
      const back = await t.ok(DiscoverDocument, { input: { connectionId: id } }, admin);
      expect(back.discover.run).toMatchObject({ outcome: 'SUCCEEDED', added: 0, removed: 0 });
      expect((await t.ok(ConnectionOperationsDocument, { id }, admin)).connection!.status).toBe('READY');
    } finally {
      await server.close();
    }
  });

  it('should keep a connection whose first discovery fails, with its error', async () => {
    const { server, mode } = await pagedServer();
    mode.value = 'empty';
    try {
      const created = await t.ok(
        CreateConnectionDocument,
        { input: { workspaceId, kind: 'MCP', name: 'Empty', endpointUrl: server.url } },
        admin,
      );
      expect(created.createConnection.connection).toMatchObject({ status: 'FAILED' });
      expect(created.createConnection.discoveryRun).toMatchObject({
        outcome: 'FAILED',
        errorCode: 'EMPTY_TOOL_LIST',
      });
      expect(created.createConnection.discoveryRun!.errorMessage).toMatch(/no usable tools/);
    } finally {
      await server.close();
    }
  });

  it('should report an unreachable server without crashing', async () => {
    const created = await t.ok(
      CreateConnectionDocument,
      { input: { workspaceId, kind: 'MCP', name: 'Nowhere', endpointUrl: 'http://127.0.0.1:9/mcp' } },
      admin,
    );
    expect(created.createConnection.discoveryRun).toMatchObject({
      outcome: 'FAILED',
      errorCode: 'UPSTREAM_UNAVAILABLE',
    });
  });
});

describe('a slow, older discovery', () => {
  it('should not put back an older listing after a newer run applied', async () => {
    let tools = ['old_tool'];
    // Run A's listing is held at the server until the test lets it go; the test knows when it arrived.
    let holdNext = false;
    let release: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const heldArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await startLegacyPeer(async (req, res) => {
      const listing = tools.map(tool);
      if (holdNext) {
        holdNext = false;
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        arrived();
        await gate;
      }
      sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools: listing } });
    });
    try {
      const created = await t.ok(
        CreateConnectionDocument,
        { input: { workspaceId, kind: 'MCP', name: 'Slow and fast', endpointUrl: server.url } },
        admin,
      );
      const id = created.createConnection.connection!.id;
      holdNext = true; // run A has read the old listing; its answer waits at the server
      const slow = t.ok(DiscoverDocument, { input: { connectionId: id } }, admin);
      await heldArrived;
      tools = ['new_tool'];
      // Run B starts later, reads the new listing, applies first.
      const fast = await t.ok(DiscoverDocument, { input: { connectionId: id } }, admin);
      expect(fast.discover.run).toMatchObject({ outcome: 'SUCCEEDED', added: 1, removed: 1 });
      release();
      const late = await slow;
      expect(late.discover.run).toMatchObject({ outcome: 'FAILED', errorCode: 'SUPERSEDED', added: 0 });
      expect((await names(id)).map((n) => n.split(':')[0])).toEqual(['new_tool']);
      expect((await t.ok(ConnectionOperationsDocument, { id }, admin)).connection!.status).toBe('READY');
    } finally {
      release();
      await server.close();
    }
  });
});

describe('OpenAPI sources that break', () => {
  let server: Server;
  let base: string;
  const state = { status: 200, body: '' };

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(state.status, { 'content-type': 'application/yaml' });
      res.end(state.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('should keep the operations when the address now answers 404, or invalid YAML', async () => {
    state.body = `openapi: 3.0.3\ninfo: { title: t, version: '1' }\nservers: [{ url: 'https://api.example.com' }]\npaths:\n  /pets:\n    get:\n      operationId: listPets\n      responses: { '200': { description: ok } }\n`;
    const created = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId,
          kind: 'OPENAPI',
          name: 'Pets',
          descriptionUrl: `${base}/openapi.yaml`,
          endpointUrl: null,
        },
      },
      admin,
    );
    const id = created.createConnection.connection!.id;
    expect(created.createConnection.discoveryRun).toMatchObject({ outcome: 'SUCCEEDED', added: 1 });
    const before = await names(id);

    state.status = 404;
    const notFound = await t.ok(DiscoverDocument, { input: { connectionId: id } }, admin);
    expect(notFound.discover.run).toMatchObject({ outcome: 'FAILED', errorCode: 'DESCRIPTION_FETCH_FAILED' });
    expect(notFound.discover.run!.errorMessage).toMatch(/404/);
    expect(await names(id)).toEqual(before);

    state.status = 200;
    state.body = 'openapi: 3.0.3\npaths: [unclosed';
    const invalid = await t.ok(DiscoverDocument, { input: { connectionId: id } }, admin);
    expect(invalid.discover.run!.outcome).toBe('FAILED');
    expect(invalid.discover.run!.errorCode).toMatch(/^DESCRIPTION_/);
    expect(await names(id)).toEqual(before);
    const em = t.app.services.orm.em.fork();
    expect(await em.count(Operation, { connection: rawId(id) })).toBe(1);
  });
});
