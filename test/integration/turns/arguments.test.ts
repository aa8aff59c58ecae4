/**
 * Issue 14, item 3: a model's arguments are checked against the operation's input schema before
 * any request, through callTool, for MCP and OpenAPI alike.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CallToolDocument,
  ConnectionOperationsDocument,
  CreateConnectionDocument,
  EnableDocument,
  LedgerDocument,
  TurnCallsDocument,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';

let t: TestApp;
let peer: SdkServerHandle;
let w: World;
let api: Server;
const apiSeen: string[] = [];
const apiBodies: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  peer = await startSdkServer({
    stateful: false,
    json: true,
    tools: [
      {
        name: 'echo',
        description: 'Echoes',
        inputSchema: { message: z.string(), times: z.number().int().min(1).optional() },
        annotations: { readOnlyHint: true },
      },
      {
        name: 'refund',
        description: 'Refunds an order',
        inputSchema: {
          order: z.object({ id: z.string(), lines: z.array(z.object({ sku: z.string(), qty: z.number() })) }),
          reason: z.enum(['damaged', 'late']),
        },
      },
    ],
  });
  w = await buildWorld(t, peer.url, 'Shop');

  api = createServer((req, res) => {
    apiSeen.push(`${req.method} ${req.url}`);
    if (req.url === '/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          openapi: '3.0.3',
          info: { title: 'Pets', version: '1' },
          servers: [{ url: `http://127.0.0.1:${(api.address() as AddressInfo).port}/api` }],
          paths: {
            '/pets/{petId}': {
              get: {
                operationId: 'getPet',
                parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
                responses: { '200': { description: 'ok' } },
              },
            },
            // Issue 25, item 7: unions and nullable fields as Stripe and FastAPI write them.
            '/pets': {
              get: {
                operationId: 'listPets',
                parameters: [
                  {
                    name: 'created',
                    in: 'query',
                    style: 'deepObject',
                    explode: true,
                    schema: {
                      anyOf: [
                        { type: 'object', properties: { gte: { type: 'integer' } } },
                        { type: 'integer' },
                      ],
                    },
                  },
                ],
                responses: { '200': { description: 'ok' } },
              },
              post: {
                operationId: 'addPet',
                requestBody: {
                  content: {
                    'application/json': {
                      schema: {
                        type: 'object',
                        properties: {
                          note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
                          mood: { type: 'string', nullable: true, enum: ['calm', 'playful'] },
                        },
                      },
                    },
                  },
                },
                responses: { '200': { description: 'ok' } },
              },
            },
          },
        }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      apiBodies.push(Buffer.concat(chunks).toString());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: req.url }));
    });
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  const conn = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId: w.workspaceId,
        kind: 'OPENAPI',
        name: 'Pets',
        descriptionUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}/openapi.json`,
        endpointUrl: null,
      },
    },
    w.admin,
  );
  const connectionId = conn.createConnection.connection!.id;
  const ops = await t.ok(ConnectionOperationsDocument, { id: connectionId }, w.admin);
  for (const op of ops.connection!.operations.nodes)
    if (!op.enabled) await t.ok(EnableDocument, { input: { operationId: op.id } }, w.admin);
  await connectTools(t, w);
  await connectTools(t, { ...w, connectionId });
});

afterAll(async () => {
  await t.stop();
  await peer.close();
  api.closeAllConnections();
  await new Promise((r) => api.close(r));
});

describe('arguments checked before any request', () => {
  it('should refuse an MCP call with a missing or mistyped argument, send nothing, and record it', async () => {
    const turn = await begin(t, w, 'mcp-args');
    const calls = peer.count('tools/call');
    const missing = await call(t, w, turn.turnId, 'shop__echo', {});
    expect(missing).toMatchObject({ ok: false, status: 'REJECTED', attempts: 0 });
    expect(missing.message).toBe(
      'The call to shop__echo was not made: its arguments do not match the tool\'s input schema. "message" is required. Fix these arguments and call the tool again.',
    );
    const mistyped = await call(t, w, turn.turnId, 'shop__echo', { message: 7, times: 1.5 });
    expect(mistyped).toMatchObject({ ok: false, status: 'REJECTED' });
    expect(mistyped.message).toContain('"message" must be string, got integer');
    expect(mistyped.message).toContain('"times" must be integer, got number');
    const nested = await call(t, w, turn.turnId, 'shop__refund', {
      order: { id: 'o1', lines: [{ sku: 'a', qty: 'two' }] },
      reason: 'changed my mind',
    });
    expect(nested).toMatchObject({ ok: false, status: 'REJECTED' });
    expect(nested.message).toContain('"order.lines[0].qty" must be number, got string');
    expect(nested.message).toContain('"reason" must be one of "damaged", "late"');
    expect(peer.count('tools/call')).toBe(calls);

    const recorded = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
    expect(recorded.turn!.calls.nodes.map((c) => [c.declaredName, c.status, c.attempts])).toEqual([
      ['shop__echo', 'REJECTED', 0],
      ['shop__echo', 'REJECTED', 0],
      ['shop__refund', 'REJECTED', 0],
    ]);
    // A refused WRITE still leaves its ledger row: the attempt is on record, with nothing sent.
    const ledger = await t.ok(LedgerDocument, { id: w.workspaceId }, w.admin);
    expect(
      ledger
        .workspace!.ledger.nodes.filter((l) => l.operationKey === 'connector.shop.refund')
        .map((l) => l.status),
    ).toEqual(['REJECTED']);
  });

  it('should send passing MCP arguments exactly as written', async () => {
    const turn = await begin(t, w, 'mcp-pass');
    const args = { order: { id: 'o1', lines: [{ sku: 'a', qty: 2 }] }, reason: 'late' };
    const ok = await call(t, w, turn.turnId, 'shop__refund', args);
    expect(ok).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    const sent = peer.requests.filter((r) => r.method === 'tools/call').at(-1)!.params as {
      arguments: unknown;
    };
    expect(sent.arguments).toEqual(args);
  });

  it('should refuse an OpenAPI integer path parameter given as "abc" before any request', async () => {
    const turn = await begin(t, w, 'openapi-args');
    const before = apiSeen.length;
    const refused = await call(t, w, turn.turnId, 'pets__getPet', { petId: 'abc' });
    expect(refused).toMatchObject({ ok: false, status: 'REJECTED', attempts: 0 });
    expect(refused.message).toContain('"petId" must be integer, got string');
    const unknown = await call(t, w, turn.turnId, 'pets__getPet', { petId: 4, petID: 5 });
    expect(unknown.message).toContain('"petID" is not an argument of this tool');
    expect(apiSeen.length).toBe(before);
    const ok = await call(t, w, turn.turnId, 'pets__getPet', { petId: 42 });
    expect(ok).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    expect(apiSeen.at(-1)).toBe('GET /api/pets/42');
  });

  it('should take any option of a union and null where the description allows it (issue 25, item 7)', async () => {
    const turn = await begin(t, w, 'openapi-unions');
    const byInteger = await call(t, w, turn.turnId, 'pets__listPets', { created: 1700000000 });
    expect(byInteger).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    expect(apiSeen.at(-1)).toBe('GET /api/pets?created=1700000000');
    const byRange = await call(t, w, turn.turnId, 'pets__listPets', { created: { gte: 1 } });
    expect(byRange).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    expect(apiSeen.at(-1)).toBe('GET /api/pets?created[gte]=1');
    const neither = await call(t, w, turn.turnId, 'pets__listPets', { created: 'last week' });
    expect(neither).toMatchObject({ ok: false, status: 'REJECTED', attempts: 0 });
    expect(neither.message).toContain('"created" must match one of the shapes the schema allows');
    const nulls = await call(t, w, turn.turnId, 'pets__addPet', { note: null, mood: null });
    expect(nulls).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    expect(apiSeen.at(-1)).toBe('POST /api/pets');
    expect(JSON.parse(apiBodies.at(-1)!)).toEqual({ note: null, mood: null });
    const outside = await call(t, w, turn.turnId, 'pets__addPet', { mood: 'grumpy' });
    expect(outside).toMatchObject({ ok: false, status: 'REJECTED' });
  });
});

describe('trace context on an MCP call', () => {
  it("should send the runtime's traceparent and tracestate as headers and in _meta", async () => {
    const turn = await begin(t, w, 'traced');
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const res = await fetch(t.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${w.runtime}`,
        traceparent,
        tracestate: 'congo=t61rcWkgMzE',
      },
      body: JSON.stringify({
        query: print(CallToolDocument),
        variables: { input: { turnId: turn.turnId, name: 'shop__echo', arguments: { message: 'traced' } } },
      }),
    });
    const json = (await res.json()) as { data: { callTool: { status: string } } };
    expect(json.data.callTool.status).toBe('SUCCEEDED');
    const sent = peer.requests.find(
      (r) =>
        r.method === 'tools/call' &&
        (r.params as { arguments?: { message?: string } }).arguments?.message === 'traced',
    )!;
    expect(sent.headers.traceparent).toBe(traceparent);
    expect(sent.headers.tracestate).toBe('congo=t61rcWkgMzE');
    expect((sent.params as { _meta?: Record<string, unknown> })._meta).toMatchObject({
      traceparent,
      tracestate: 'congo=t61rcWkgMzE',
    });
  });
});
