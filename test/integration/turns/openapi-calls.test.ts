import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallToolDocument, LedgerDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { begin, buildOpenApiWorld, call, type World } from '../../support/turns.js';

const KEY = 'k3y-0123456789-secret';
let t: TestApp;
let server: Server;
let base: string;
const seen: {
  method: string;
  url: string;
  body: string;
  apiKey: string | undefined;
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}[] = [];
let w: World;

const description = () => ({
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  servers: [{ url: `${base}/api` }],
  paths: {
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        parameters: [
          { name: 'petId', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'fields', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/pets': {
      post: {
        operationId: 'createPet',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['name'],
                properties: { name: { type: 'string' }, tag: { type: 'string' } },
              },
            },
          },
        },
        responses: { '201': { description: 'created' } },
      },
    },
    '/broken': { get: { operationId: 'broken', responses: { '200': { description: 'ok' } } } },
  },
});

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void (async (): Promise<void> => {
      const text = await body(req);
      if (req.url === '/openapi.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(description()));
        return;
      }
      seen.push({
        method: req.method!,
        url: req.url!,
        body: text,
        apiKey: req.headers['x-api-key'] as string | undefined,
        traceparent: req.headers.traceparent as string | undefined,
        tracestate: req.headers.tracestate as string | undefined,
      });
      if (req.headers['x-api-key'] !== KEY) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":"no key"}');
        return;
      }
      if (req.url === '/api/broken') {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('database on fire');
        return;
      }
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, url: req.url, body: text ? JSON.parse(text) : null }));
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  t = await startTestApp();
  w = await buildOpenApiWorld(t, 'Pets', `${base}/openapi.json`, {
    credential: { kind: 'HEADER', headerName: 'X-Api-Key', key: KEY },
  });
});

afterAll(async () => {
  await t.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('OpenAPI calls in a turn', () => {
  it("should pass the runtime's valid trace context on to the API, record it on the call, and drop an invalid one", async () => {
    const turn = await begin(t, w, 'traced');
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const callWith = async (headers: Record<string, string>, petId: string) => {
      const res = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${w.runtime}`, ...headers },
        body: JSON.stringify({
          query: print(CallToolDocument),
          variables: { input: { turnId: turn.turnId, name: 'pets__getPet', arguments: { petId } } },
        }),
      });
      const json = (await res.json()) as { data: { callTool: { status: string } } };
      expect(json.data.callTool.status).toBe('SUCCEEDED');
      return seen.find((r) => r.url.startsWith(`/api/pets/${petId}`))!;
    };
    expect(await callWith({ traceparent, tracestate: 'rojo=00f067aa0ba902b7' }, 'traced-1')).toMatchObject({
      traceparent,
      tracestate: 'rojo=00f067aa0ba902b7',
    });
    const invalid = await callWith(
      { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' },
      'traced-2',
    );
    expect(invalid.traceparent).toBeUndefined();
    const calls = await t.ok<
      { turn: { calls: { nodes: { traceparent: string | null; tracestate: string | null }[] } } },
      unknown
    >(
      'query($id: ID!) { turn(id: $id) { calls(first: 10) { nodes { traceparent tracestate } } } }',
      { id: turn.turnId },
      w.admin,
    );
    expect(calls.turn.calls.nodes).toEqual([
      { traceparent, tracestate: 'rojo=00f067aa0ba902b7' },
      { traceparent: null, tracestate: null },
    ]);
  });

  it('should encode path values, send fields under their wire names, and carry the credential', async () => {
    const turn = await begin(t, w);
    expect(turn.tools.map((x) => x.name)).toEqual([
      'pets__broken',
      'pets__createPet',
      'pets__getPet',
      'finish_turn',
    ]);
    const got = await call(t, w, turn.turnId, 'pets__getPet', {
      petId: 'a/b ?#',
      fields: ['x', 'y'],
    });
    expect(got).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    expect(got.structuredContent).toEqual({
      status: 200,
      body: { method: 'GET', url: '/api/pets/a%2Fb%20%3F%23?fields=x&fields=y', body: null },
    });
    const created = await call(t, w, turn.turnId, 'pets__createPet', { name: 'Rex' });
    expect(created).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      url: '/api/pets',
      body: '{"name":"Rex"}',
      apiKey: KEY,
    });
  });

  it('should refuse a call with a missing path value before any request, naming the field', async () => {
    const turn = await begin(t, w);
    const before = seen.length;
    const refused = await call(t, w, turn.turnId, 'pets__getPet', {});
    expect(refused).toMatchObject({ ok: false, status: 'REJECTED', attempts: 0 });
    expect(refused.message).toMatch(/petId/);
    const missingBody = await call(t, w, turn.turnId, 'pets__createPet', { tag: 'x' });
    expect(missingBody).toMatchObject({ ok: false, status: 'REJECTED' });
    expect(missingBody.message).toMatch(/name/);
    expect(seen.length).toBe(before);
  });

  it('should give an API error status to the model as a tool error, and ledger WRITE calls only', async () => {
    const turn = await begin(t, w);
    const broken = await call(t, w, turn.turnId, 'pets__broken');
    expect(broken).toMatchObject({ ok: false, status: 'TOOL_ERROR' });
    expect(broken.message).toBe(
      'The API behind pets__broken answered HTTP 500 ("database on fire"). It may work if tried again later.',
    );
    const ledger = await t.ok(LedgerDocument, { id: w.workspaceId }, w.admin);
    const keys = ledger.workspace!.ledger.nodes.map((l) => `${l.operationKey}:${l.status}`);
    expect(keys.sort()).toEqual([
      'connector.pets.create_pet:REJECTED',
      'connector.pets.create_pet:SUCCEEDED',
    ]);
    expect(JSON.stringify(ledger)).not.toContain(KEY);
  });
});
