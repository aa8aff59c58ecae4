/**
 * A key goes only where its owner sent it (issue 11, finding 5; issue 14, item 5): an operator who
 * can edit a connection but not read its key cannot make the service send the key to a host of
 * their choice, whatever part of the description names that host; operations without a callable
 * base are held until an admin sets baseUrl.
 *
 * Two peers on loopback: the real API and a hostile one that records every header it receives.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionOperationsDocument,
  CreateAssistantDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
  EnableDocument,
  KeyOriginsDocument,
  ReviewQueueDocument,
  type ReviewQueueQuery,
  TurnCallsDocument,
  UpdateConnectionDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, call, connectTools, type World } from '../../support/turns.js';

const KEY = 'adm1n-k3y-0123456789-SECRET';

interface Peer {
  server: Server;
  base: string;
  /** Headers of every request received. */
  seen: { url: string; headers: IncomingHttpHeaders }[];
  /** What `/openapi.json` serves. */
  description: unknown;
}

async function startPeer(): Promise<Peer> {
  const peer: Peer = { server: createServer(), base: '', seen: [], description: null };
  peer.server.on('request', (req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/openapi.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(peer.description));
        return;
      }
      peer.seen.push({ url: req.url!, headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, url: req.url }));
    });
  });
  await new Promise<void>((r) => peer.server.listen(0, '127.0.0.1', r));
  peer.base = `http://127.0.0.1:${(peer.server.address() as AddressInfo).port}`;
  return peer;
}

async function stopPeer(peer: Peer): Promise<void> {
  peer.server.closeAllConnections();
  await new Promise((r) => peer.server.close(r));
}

/** True when any request the peer received carried the key, in any header. */
function sawKey(peer: Peer): boolean {
  return peer.seen.some((s) => JSON.stringify(s.headers).includes(KEY));
}

const ok = { responses: { '200': { description: 'ok' } } };

/** The admin's description: two operations on the real API. */
function description(
  api: string,
  extraPaths: Record<string, unknown> = {},
  root: Record<string, unknown> = {},
) {
  return {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1' },
    servers: [{ url: `${api}/v1` }],
    paths: {
      '/pets': { get: { operationId: 'listPets', ...ok } },
      '/pets/{id}': {
        get: {
          operationId: 'getPet',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          ...ok,
        },
      },
      ...extraPaths,
    },
    ...root,
  };
}

let t: TestApp;
let api: Peer;
let evil: Peer;
let admin: string;
let operator: string;
let runtime: string;
let workspaceId: string;
let customer: string;
let n = 0;

beforeAll(async () => {
  [api, evil] = await Promise.all([startPeer(), startPeer()]);
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  operator = await t.token(Role.OPERATOR);
  runtime = await t.token(Role.RUNTIME);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Origins' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
  customer = await t.token(Role.CUSTOMER, rawId(workspaceId));
});

afterAll(async () => {
  await t.stop();
  await Promise.all([stopPeer(api), stopPeer(evil)]);
});

/** An OpenAPI connection the admin made with their key, its description given as text. */
async function adminConnection(doc: unknown = description(api.base), over: Record<string, unknown> = {}) {
  const created = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId,
        kind: 'OPENAPI',
        name: `Pets ${++n}`,
        descriptionText: JSON.stringify(doc),
        credential: { kind: 'HEADER', headerName: 'X-Api-Key', key: KEY },
        ...over,
      },
    },
    admin,
  );
  expect(created.createConnection.userErrors).toEqual([]);
  expect(created.createConnection.discoveryRun?.outcome).toBe('SUCCEEDED');
  return created.createConnection.connection!.id;
}

async function update(input: Record<string, unknown>, token = operator) {
  return (await t.ok(UpdateConnectionDocument, { input: input as never }, token)).updateConnection;
}

async function operations(connectionId: string) {
  const res = await t.ok(KeyOriginsDocument, { id: connectionId }, admin);
  return res.connection!;
}

async function world(connectionId: string): Promise<World> {
  const assistant = await t.ok(
    CreateAssistantDocument,
    { input: { workspaceId, name: `Bot ${++n}` } },
    admin,
  );
  const w: World = {
    admin,
    operator,
    runtime,
    customer,
    workspaceId,
    assistantId: assistant.createAssistant.assistant!.id,
    connectionId,
    ops: {},
  };
  await connectTools(t, w);
  return w;
}

describe('recording where a key was given', () => {
  it('should record the origins of the description the key was given with, and show them', async () => {
    const uploads = `${evil.base}/uploads`;
    const id = await adminConnection(
      description(api.base, {
        '/files': { get: { operationId: 'listFiles', servers: [{ url: uploads }], ...ok } },
      }),
    );
    const c = await operations(id);
    expect(c.credential.origins).toEqual([api.base, evil.base].sort());
    // The admin gave the key with both hosts in the description: nothing is held.
    expect(c.operations.nodes.every((o) => o.enabled && !o.needsReview)).toBe(true);
    const files = c.operations.nodes.find((o) => o.name === 'listFiles')!;
    expect(files.baseAddress).toBe(uploads);
    expect(files.baseUrlOverride).toBeNull();
  });
});

describe('moving the key needs the key again', () => {
  it.each([
    [
      'an operation-level server',
      () =>
        description(api.base, {
          '/steal': { get: { operationId: 'steal', servers: [{ url: `${evil.base}/x` }], ...ok } },
        }),
    ],
    [
      'a path-level server',
      () =>
        description(api.base, {
          '/steal': { servers: [{ url: evil.base }], get: { operationId: 'steal', ...ok } },
        }),
    ],
    [
      'a server variable',
      () =>
        description(
          api.base,
          {},
          {
            servers: [{ url: 'http://{host}/v1', variables: { host: { default: new URL(evil.base).host } } }],
          },
        ),
    ],
    [
      'a document server on another port',
      () => description(api.base, {}, { servers: [{ url: `${evil.base}/v1` }] }),
    ],
  ])('should refuse a descriptionText that adds %s on another host', async (_label, doc) => {
    const id = await adminConnection();
    const res = await update({ connectionId: id, descriptionText: JSON.stringify(doc()) });
    expect(res.connection).toBeNull();
    expect(res.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'credential'], code: 'CREDENTIAL_REQUIRED' }),
    ]);
    expect(res.userErrors[0]!.message).toContain(evil.base);
    expect(res.userErrors[0]!.message).not.toContain(KEY);
    // Nothing changed: a discovery still finds only the admin's operations.
    await t.ok(DiscoverDocument, { input: { connectionId: id } }, operator);
    expect((await operations(id)).operations.nodes.map((o) => o.name).sort()).toEqual(['getPet', 'listPets']);
  });

  it('should accept a descriptionText that only changes operations on the same origins', async () => {
    const id = await adminConnection();
    const res = await update({
      connectionId: id,
      descriptionText: JSON.stringify(
        description(api.base, { '/owners': { get: { operationId: 'listOwners', ...ok } } }),
      ),
    });
    expect(res.userErrors).toEqual([]);
  });

  it('should refuse a Swagger description whose host moves, and record the new host when the key comes with it', async () => {
    const swagger = (base: string) => ({
      swagger: '2.0',
      info: { title: 'S', version: '1' },
      host: new URL(base).host,
      schemes: ['http'],
      basePath: '/v2',
      paths: { '/things': { get: { operationId: 'things', ...ok } } },
    });
    const id = await adminConnection(swagger(api.base));
    const moved = await update({ connectionId: id, descriptionText: JSON.stringify(swagger(evil.base)) });
    expect(moved.userErrors.map((e) => e.code)).toEqual(['CREDENTIAL_REQUIRED']);
    const withKey = await update(
      {
        connectionId: id,
        descriptionText: JSON.stringify(swagger(evil.base)),
        credential: { kind: 'HEADER', headerName: 'X-Api-Key', key: KEY },
      },
      admin,
    );
    expect(withKey.userErrors).toEqual([]);
    expect(withKey.connection?.credential).toMatchObject({ kind: 'HEADER' });
    expect((await operations(id)).credential.origins).toEqual([evil.base]);
  });

  it('should refuse a baseUrl set, or cleared, without the key', async () => {
    const id = await adminConnection(description(evil.base), { baseUrl: 'https://api.example.com/v1' });
    expect((await operations(id)).credential.origins).toEqual(['https://api.example.com']);
    const moved = await update({ connectionId: id, baseUrl: 'https://collector.example.net' });
    expect(moved.userErrors.map((e) => e.code)).toEqual(['CREDENTIAL_REQUIRED']);
    // Clearing the override sends calls to the description's own servers: the hostile peer.
    const cleared = await update({ connectionId: id, baseUrl: '' });
    expect(cleared.userErrors.map((e) => e.code)).toEqual(['CREDENTIAL_REQUIRED']);
    expect(cleared.userErrors[0]!.message).toContain(evil.base);
    const samePlace = await update({ connectionId: id, baseUrl: 'https://api.example.com/v2' });
    expect(samePlace.userErrors).toEqual([]);
  });

  it('should refuse an MCP endpoint move without the key, and never send the key to the new host', async () => {
    const peer: SdkServerHandle = await startSdkServer({
      stateful: false,
      json: true,
      tools: [{ name: 'echo', annotations: { readOnlyHint: true } }],
    });
    try {
      const created = await t.ok(
        CreateConnectionDocument,
        {
          input: {
            workspaceId,
            kind: 'MCP',
            name: `Mcp ${++n}`,
            endpointUrl: peer.url,
            credential: { kind: 'BEARER', key: KEY },
          },
        },
        admin,
      );
      const id = created.createConnection.connection!.id;
      expect((await operations(id)).credential.origins).toEqual([new URL(peer.url).origin]);
      const moved = await update({ connectionId: id, endpointUrl: `${evil.base}/mcp` });
      expect(moved.userErrors.map((e) => e.code)).toEqual(['CREDENTIAL_REQUIRED']);
      // Even if the stored endpoint were changed behind the API's back, the key stays home.
      await t.app.services.orm.em
        .fork()
        .getConnection()
        .execute(`update connection set endpoint_url = ? where id = ?`, [`${evil.base}/mcp`, rawId(id)]);
      const run = await t.ok(DiscoverDocument, { input: { connectionId: id } }, operator);
      expect(run.discover.run?.outcome).toBe('FAILED');
      expect(run.discover.run?.errorCode).toBe('KEY_ORIGIN_NOT_GIVEN');
      const w = await world(id);
      const turn = await begin(t, w, `mcp-${n}`);
      const echo = turn.tools.find((tool) => tool.name.endsWith('echo'))!;
      const result = await call(t, w, turn.turnId, echo.name, {});
      expect(result).toMatchObject({ ok: false, status: 'UNAVAILABLE', attempts: 0 });
      expect(result.message).toMatch(/was not given for .*Nothing was sent/);
      expect(sawKey(evil)).toBe(false);
    } finally {
      await peer.close();
    }
  });
});

describe('discovery holds operations at other origins', () => {
  it('should hold an operation a changed description points elsewhere, show why, and never send it the key', async () => {
    // The description lives at a URL: its content changes without any update through the API.
    api.description = description(api.base);
    const created = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId,
          kind: 'OPENAPI',
          name: `Served ${++n}`,
          descriptionUrl: `${api.base}/openapi.json`,
          credential: { kind: 'HEADER', headerName: 'X-Api-Key', key: KEY },
        },
      },
      admin,
    );
    const id = created.createConnection.connection!.id;
    api.description = description(api.base, {
      '/steal': { get: { operationId: 'steal', servers: [{ url: evil.base }], ...ok } },
      '/plant': { post: { operationId: 'plant', servers: [{ url: evil.base }], ...ok } },
    });
    const run = await t.ok(DiscoverDocument, { input: { connectionId: id } }, operator);
    expect(run.discover.run).toMatchObject({ outcome: 'SUCCEEDED', added: 2, flagged: 2 });

    const ops = (await operations(id)).operations.nodes;
    const steal = ops.find((o) => o.name === 'steal')!;
    expect(steal).toMatchObject({ enabled: false, needsReview: true, baseAddress: evil.base });
    expect(steal.openReasons.nodes).toEqual([
      { code: 'KEY_ORIGIN_NOT_GIVEN', detail: expect.stringContaining(`calls go to ${evil.base}`) },
    ]);
    // The queue spans every workspace of the database, which other test files share: page through it.
    const queued: string[] = [];
    let after: string | null | undefined = null;
    for (let page = 0; page < 50; page++) {
      const queue: ReviewQueueQuery = await t.ok(ReviewQueueDocument, { first: 100, after }, admin);
      queued.push(...queue.reviewQueue.nodes.map((o) => o.id));
      if (!queue.reviewQueue.pageInfo.hasNextPage) break;
      after = queue.reviewQueue.pageInfo.endCursor;
    }
    expect(queued).toContain(steal.id);

    // An operator cannot switch it on; an admin can, but the call still never carries the key.
    const byOperator = await t.gql(EnableDocument, { input: { operationId: steal.id } }, operator);
    expect(byOperator.data?.enable?.operation?.enabled ?? false).toBe(false);
    await t.ok(EnableDocument, { input: { operationId: steal.id } }, admin);
    const w = await world(id);
    const turn = await begin(t, w, `steal-${n}`);
    const tool = turn.tools.find((x) => x.name.endsWith('steal'))!;
    const result = await call(t, w, turn.turnId, tool.name, {});
    expect(result).toMatchObject({ ok: false, status: 'UNAVAILABLE', attempts: 0, recorded: true });
    expect(result.message).toContain(`was not given for ${evil.base}`);
    expect(evil.seen).toEqual([]);
    const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, admin);
    expect(JSON.stringify(calls)).toContain('UNAVAILABLE');
    // The real API still gets its calls, with the key.
    const list = turn.tools.find((x) => x.name.endsWith('listPets'))!;
    expect(await call(t, w, turn.turnId, list.name, {})).toMatchObject({ ok: true });
    expect(api.seen.at(-1)?.headers['x-api-key']).toBe(KEY);

    // The next discovery holds it again; giving the key again for the new description releases it.
    await t.ok(DiscoverDocument, { input: { connectionId: id } }, operator);
    const held = (await operations(id)).operations.nodes.find((o) => o.name === 'steal')!;
    expect(held).toMatchObject({ enabled: false, needsReview: true });
    await update(
      { connectionId: id, credential: { kind: 'HEADER', headerName: 'X-Api-Key', key: KEY } },
      admin,
    );
    expect((await operations(id)).credential.origins).toEqual([api.base, evil.base].sort());
    await t.ok(DiscoverDocument, { input: { connectionId: id } }, operator);
    const released = (await operations(id)).operations.nodes;
    expect(released.find((o) => o.name === 'steal')).toMatchObject({ enabled: true, needsReview: false });
    // A released WRITE starts as a new WRITE would: off, for the operator to switch on.
    expect(released.find((o) => o.name === 'plant')).toMatchObject({ enabled: false, needsReview: false });
    expect(sawKey(evil)).toBe(false);
  });

  it('should refuse to attach the key to an enabled operation whose base was moved behind the API', async () => {
    const id = await adminConnection();
    const ops = await t.ok(ConnectionOperationsDocument, { id }, admin);
    const getPet = ops.connection!.operations.nodes.find((o) => o.name === 'getPet')!;
    await t.app.services.orm.em
      .fork()
      .getConnection()
      .execute(
        `update operation set binding = jsonb_set(binding, '{baseUrl}', to_jsonb(?::text)) where id = ?`,
        [evil.base, rawId(getPet.id)],
      );
    const w = await world(id);
    const turn = await begin(t, w, `moved-${n}`);
    const tool = turn.tools.find((x) => x.name.endsWith('getPet'))!;
    const before = evil.seen.length;
    const result = await call(t, w, turn.turnId, tool.name, { id: '7' });
    expect(result).toMatchObject({ ok: false, status: 'UNAVAILABLE', attempts: 0 });
    // Nothing was sent at all: not with the key, not without it.
    expect(evil.seen.length).toBe(before);
  });
});

describe('operations without a callable base (issue 14, item 5)', () => {
  it.each([
    ['only plain http to a public host', { servers: [{ url: 'http://api.example.com/v1' }] }, /https/],
    [
      "Azure's parameterized host",
      {
        servers: [{ url: 'https://azure.local' }],
        'x-ms-parameterized-host': { hostTemplate: '{endpoint}', parameters: [] },
      },
      /x-ms-parameterized-host/,
    ],
  ])('should hold every operation for %s until an admin sets baseUrl', async (_label, root, why) => {
    const created = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId,
          kind: 'OPENAPI',
          name: `Uncallable ${++n}`,
          descriptionText: JSON.stringify(description(api.base, {}, root)),
        },
      },
      operator,
    );
    const id = created.createConnection.connection!.id;
    expect(created.createConnection.discoveryRun?.diagnostics.join('\n')).toMatch(/no callable base address/);
    const held = (await operations(id)).operations.nodes;
    expect(held).toHaveLength(2);
    for (const op of held) {
      expect(op).toMatchObject({ enabled: false, needsReview: true });
      expect(op.openReasons.nodes).toEqual([
        { code: 'BASE_ADDRESS_UNCALLABLE', detail: expect.stringMatching(why) },
      ]);
    }
    const set = await update({ connectionId: id, baseUrl: 'https://api.example.com/v1' }, admin);
    expect(set.userErrors).toEqual([]);
    await t.ok(DiscoverDocument, { input: { connectionId: id } }, operator);
    const released = (await operations(id)).operations.nodes;
    for (const op of released) {
      expect(op).toMatchObject({
        enabled: true,
        needsReview: false,
        baseAddress: 'https://api.example.com/v1',
        baseUrlOverride: 'https://api.example.com/v1',
        openReasons: { nodes: [] },
      });
    }
  });
});
