/**
 * DESIGN.md rule 7 on the OpenAPI path, against a hostile API that breaks the connection or never
 * answers: a WRITE that may have reached the server is sent once, a READ is retried once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';
import { begin, buildOpenApiWorld, call, type World } from '../../support/turns.js';
import { FakeClock } from '../../support/fake-clock.js';
import { waitUntil } from '../../support/wait.js';

/** Per-attempt budget of the connection: long enough for a busy machine, short for the test. */
const TIMEOUT_MS = 1_000;
let t: TestApp;
/** The app's clock: a test moves it past the deadline once the request has arrived. */
const clock = new FakeClock();
let server: Server;
let base: string;
let w: World;
/** Requests that reached the API, by `METHOD path`. */
const arrived = new Map<string, number>();

const description = () => ({
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1' },
  servers: [{ url: `${base}/api` }],
  paths: {
    '/reset/orders': {
      post: { operationId: 'resetOrder', responses: { '201': { description: 'created' } } },
    },
    '/reset/items': { get: { operationId: 'resetItems', responses: { '200': { description: 'ok' } } } },
    '/silent/orders': {
      post: { operationId: 'silentOrder', responses: { '201': { description: 'created' } } },
    },
    '/silent/items': { get: { operationId: 'silentItems', responses: { '200': { description: 'ok' } } } },
  },
});

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(description()));
      return;
    }
    const key = `${req.method} ${req.url}`;
    arrived.set(key, (arrived.get(key) ?? 0) + 1);
    // The request is read in full first, so that it has reached the API before anything goes wrong.
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/api/reset/')) req.socket.destroy();
      // `/api/silent/…` never answers: the client's deadline ends the attempt.
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  t = await startTestApp({ clock });
  w = await buildOpenApiWorld(t, 'Shop', `${base}/openapi.json`, { timeoutMs: TIMEOUT_MS });
});

afterAll(async () => {
  await t.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('OpenAPI retries against a hostile API', () => {
  it('should send a WRITE once when the connection breaks after the request arrived', async () => {
    const turn = await begin(t, w, 'reset-write');
    const got = await call(t, w, turn.turnId, 'shop__resetOrder');
    expect(got).toMatchObject({ ok: false, status: 'UPSTREAM_ERROR', attempts: 1 });
    expect(got.message).toMatch(/broke during the call/);
    expect(arrived.get('POST /api/reset/orders')).toBe(1);
  });

  it('should send a WRITE once when it times out', async () => {
    const turn = await begin(t, w, 'silent-write');
    const pending = call(t, w, turn.turnId, 'shop__silentOrder');
    await waitUntil(() => arrived.get('POST /api/silent/orders') === 1);
    await clock.advance(TIMEOUT_MS);
    const got = await pending;
    expect(got).toMatchObject({ ok: false, status: 'TIMEOUT', attempts: 1, durationMs: TIMEOUT_MS });
    expect(arrived.get('POST /api/silent/orders')).toBe(1);
  });

  it('should retry a READ once after a broken connection and once after a timeout', async () => {
    const turn = await begin(t, w, 'reads');
    expect(await call(t, w, turn.turnId, 'shop__resetItems')).toMatchObject({
      ok: false,
      status: 'UPSTREAM_ERROR',
      attempts: 2,
    });
    expect(arrived.get('GET /api/reset/items')).toBe(2);
    const pending = call(t, w, turn.turnId, 'shop__silentItems');
    await waitUntil(() => arrived.get('GET /api/silent/items') === 1);
    await clock.advance(TIMEOUT_MS);
    await waitUntil(() => arrived.get('GET /api/silent/items') === 2);
    await clock.advance(TIMEOUT_MS);
    expect(await pending).toMatchObject({
      ok: false,
      status: 'TIMEOUT',
      attempts: 2,
      durationMs: 2 * TIMEOUT_MS,
    });
    expect(arrived.get('GET /api/silent/items')).toBe(2);
  });
});
