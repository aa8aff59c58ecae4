/**
 * The MCP client against servers that misbehave: every case has an exact outcome. What ended a call
 * is shown by what the server saw (its connection closed while it still held the answer), not by a
 * clock: a client that waited for the server instead hangs until the test's own timeout.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { OutboundClient } from '../../../src/http/outbound.js';
import { McpClient, McpClientError, type CallToolOutcome } from '../../../src/mcp/client.js';
import {
  acceptNotification,
  initializeResult,
  sendJson,
  startRawServer,
  type RawRequest,
  type RawServerHandle,
} from '../../support/mcp-servers.js';
import { waitUntil } from '../../support/wait.js';
import { cleanupAfterEach } from '../../support/cleanups.js';
import { mcpClient, mcpEndpoint } from '../../support/mcp-client.js';
import { FakeClock } from '../../support/fake-clock.js';
import { mcpClientOn } from '../../support/fake-time-clients.js';

const cleanups = cleanupAfterEach();

const client = (options: ConstructorParameters<typeof McpClient>[1] = {}) => mcpClient(cleanups, options);

const endpoint = (url: string, timeoutMs = 2_000) => mcpEndpoint(url, { timeoutMs }, 'hostile');

type Handler = (req: RawRequest, res: ServerResponse) => void;

/**
 * A raw MCP peer: answers `initialize`, accepts notifications, refuses DELETE with 405, and hands
 * `tools/list` and `tools/call` to the test.
 */
async function peer(handlers: {
  list?: Handler;
  call?: Handler;
  initialize?: Handler;
}): Promise<RawServerHandle> {
  const s = await startRawServer((req, res) => {
    if (req.httpMethod === 'DELETE') {
      res.writeHead(405);
      res.end();
      return;
    }
    if (acceptNotification(req, res)) return;
    if (req.method === 'initialize') {
      if (handlers.initialize) handlers.initialize(req, res);
      else sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult() });
      return;
    }
    if (req.method === 'tools/list' && handlers.list) return handlers.list(req, res);
    if (req.method === 'tools/call' && handlers.call) return handlers.call(req, res);
    sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools: [] } });
  });
  cleanups.push(() => s.close());
  return s;
}

/** A handler that never answers and records the JSON-RPC id of each request whose connection closed. */
function holdAndRecordClose(closed: unknown[]): Handler {
  return (req, res) => {
    res.on('close', () => closed.push(req.id));
  };
}

const READ = { risk: 'READ', idempotent: false } as const;
const WRITE = { risk: 'WRITE', idempotent: false } as const;

function cancelledIds(s: RawServerHandle): unknown[] {
  return s.requests
    .filter((r) => r.method === 'notifications/cancelled')
    .map((r) => (r.body as { params: { requestId: unknown } }).params.requestId);
}

function callIds(s: RawServerHandle): unknown[] {
  return s.requests.filter((r) => r.method === 'tools/call').map((r) => r.id);
}

async function discoveryError(promise: Promise<unknown>): Promise<McpClientError> {
  const err = await promise.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(McpClientError);
  return err as McpClientError;
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  inputSchema: { type: 'object' },
  ...extra,
});

describe('a server that never answers', () => {
  it('should time out a READ call at the configured time, retry once with a new id, and cancel both ids', async () => {
    const closed: unknown[] = [];
    const s = await peer({ call: holdAndRecordClose(closed) });
    const clock = new FakeClock();
    const c = mcpClientOn(clock, cleanups);
    const pending = c.callTool(endpoint(s.url, 10_000), 'slow', {}, READ);
    await waitUntil(() => callIds(s).length === 1);
    await clock.advance(9_999);
    expect(callIds(s)).toHaveLength(1);
    await clock.advance(1);
    // The retry, once the first id's cancel has reached the server.
    await waitUntil(() => callIds(s).length === 2 && cancelledIds(s).length === 1);
    await clock.advance(10_000);
    const outcome = await pending;
    expect(outcome).toMatchObject({ kind: 'timeout', timeoutMs: 10_000, attempts: 2, resends: 0 });
    expect(outcome.durationMs).toBe(20_000);
    await c.whenIdle();
    const ids = callIds(s);
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
    expect(cancelledIds(s)).toEqual(ids);
    // Each attempt was ended by its deadline: the client dropped both connections the server held.
    await waitUntil(() => closed.length === 2);
    expect(closed).toEqual(ids);
  });

  it('should count a session re-send apart from attempts: 400 without a session, then a timeout and its retry', async () => {
    // The issue-12 case that used to report 3 attempts: the re-send after initialize is not an attempt.
    const s = await peer({
      initialize: (req, res) =>
        sendJson(
          res,
          200,
          { jsonrpc: '2.0', id: req.id, result: initializeResult() },
          { 'mcp-session-id': 's-1' },
        ),
      call: (req, res) => {
        if (req.headers['mcp-session-id'] === undefined)
          sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'No session' } });
        // With the session: never answers.
      },
    });
    const clock = new FakeClock();
    const c = mcpClientOn(clock, cleanups);
    const pending = c.callTool(endpoint(s.url, 10_000), 'slow', {}, READ);
    await waitUntil(() => callIds(s).length === 2);
    await clock.advance(10_000);
    await waitUntil(() => callIds(s).length === 3 && cancelledIds(s).length === 1);
    await clock.advance(10_000);
    const outcome = await pending;
    expect(outcome).toMatchObject({ kind: 'timeout', attempts: 2, resends: 1 });
    await c.whenIdle();
    expect(callIds(s)).toHaveLength(3);
    expect(s.count('initialize')).toBe(1);
  });

  it('should not retry a WRITE call that timed out, since it may have reached the server', async () => {
    const closed: unknown[] = [];
    const s = await peer({ call: holdAndRecordClose(closed) });
    const clock = new FakeClock();
    const c = mcpClientOn(clock, cleanups);
    const pending = c.callTool(endpoint(s.url, 10_000), 'slow', {}, WRITE);
    await waitUntil(() => callIds(s).length === 1);
    await clock.advance(10_000);
    const outcome = await pending;
    expect(outcome).toMatchObject({ kind: 'timeout', timeoutMs: 10_000, attempts: 1, durationMs: 10_000 });
    await c.whenIdle();
    expect(callIds(s)).toHaveLength(1);
    expect(cancelledIds(s)).toEqual(callIds(s));
    await waitUntil(() => closed.length === 1);
    expect(closed).toEqual(callIds(s));
  });

  it('should retry an idempotent WRITE after a timeout', async () => {
    const s = await peer({ call: () => undefined });
    const clock = new FakeClock();
    const c = mcpClientOn(clock, cleanups);
    const pending = c.callTool(endpoint(s.url, 10_000), 'slow', {}, { risk: 'WRITE', idempotent: true });
    await waitUntil(() => callIds(s).length === 1);
    await clock.advance(10_000);
    await waitUntil(() => callIds(s).length === 2 && cancelledIds(s).length === 1);
    await clock.advance(10_000);
    expect(await pending).toMatchObject({ kind: 'timeout', attempts: 2 });
  });

  it('should end a call as cancelled when the caller aborts', async () => {
    const closed: unknown[] = [];
    const s = await peer({ call: holdAndRecordClose(closed) });
    const c = client();
    const controller = new AbortController();
    // Aborts once the server holds the call; the endpoint's deadline (2 s) would end it as a timeout.
    void waitUntil(() => callIds(s).length === 1).then(() => controller.abort());
    const outcome = await c.callTool(endpoint(s.url), 'slow', {}, { ...READ, signal: controller.signal });
    expect(outcome).toMatchObject({ kind: 'cancelled', attempts: 1 });
    await c.whenIdle();
    expect(cancelledIds(s)).toEqual(callIds(s));
    await waitUntil(() => closed.length === 1);
    expect(closed).toEqual(callIds(s));
  });

  it('should time out a discovery whose initialize never answers', async () => {
    const closed: unknown[] = [];
    const s = await peer({ initialize: holdAndRecordClose(closed) });
    const clock = new FakeClock();
    const pending = discoveryError(mcpClientOn(clock, cleanups).discover(endpoint(s.url, 10_000)));
    await waitUntil(() => s.count('initialize') === 1);
    await clock.advance(10_000);
    const err = await pending;
    expect(err.code).toBe('TIMEOUT');
    expect(s.count('tools/list')).toBe(0);
    await waitUntil(() => closed.length === s.count('initialize'));
    expect(closed.length).toBeGreaterThan(0);
  });
});

describe('event streams that never bring our answer', () => {
  it('should time out on a stream that drips notifications forever', async () => {
    const s = await peer({
      call: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const note = JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/message',
          params: { level: 'info', data: 'tick' },
        });
        const t = setInterval(() => res.write(`data: ${note}\n\n`), 20);
        res.on('close', () => {
          clearInterval(t);
          closed = true;
        });
      },
    });
    let closed = false;
    const clock = new FakeClock();
    const pending = mcpClientOn(clock, cleanups).callTool(endpoint(s.url, 10_000), 'drip', {}, WRITE);
    await waitUntil(() => callIds(s).length === 1);
    // Time passes while the stream drips: each step reads notifications, none pushes the deadline back.
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 25));
      await clock.advance(1_000);
    }
    // A client that reset its deadline on each event would read this stream forever.
    expect(await pending).toMatchObject({
      kind: 'timeout',
      timeoutMs: 10_000,
      attempts: 1,
      durationMs: 10_000,
    });
    await waitUntil(() => closed);
  });

  it('should stop a stream that floods events past the event bound', async () => {
    const s = await peer({
      call: (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const other = JSON.stringify({ jsonrpc: '2.0', id: 'other', result: {} });
        const t = setInterval(() => res.write(`data: ${other}\n\n`.repeat(20)), 5);
        res.on('close', () => {
          clearInterval(t);
          closed = true;
        });
        void req;
      },
    });
    let closed = false;
    // Stopped by the bound, not by the deadline (2 s), which would make the outcome a timeout.
    const outcome = await client({ maxSseEvents: 50 }).callTool(endpoint(s.url), 'flood', {}, READ);
    expect(outcome).toMatchObject({ kind: 'protocol_error', code: 'SSE_LIMIT_EXCEEDED', attempts: 1 });
    await waitUntil(() => closed);
  });

  it('should report a stream that ends with only other ids as NO_RESPONSE', async () => {
    const s = await peer({
      call: (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 999_999, result: { content: [] } })}\n\n`);
        res.write('data:\n\n');
        res.end(
          `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: {} })}\n\n`,
        );
        void req;
      },
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, READ)).toMatchObject({
      kind: 'protocol_error',
      code: 'NO_RESPONSE',
      rpcError: null,
      attempts: 1,
    });
  });

  it('should take our answer from a stream and stop reading, although the stream stays open', async () => {
    const s = await peer({
      call: (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': priming\n\nid: 1\ndata:\n\n');
        res.write(
          `data: ${JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { content: [{ type: 'text', text: 'ok' }] } })}\n\n`,
        );
        // Never ends.
        res.on('close', () => (closed = true));
      },
    });
    let closed = false;
    // A client that read on to the end of the stream would end this call as a timeout instead.
    const outcome = await client().callTool(endpoint(s.url, 5_000), 'x', {}, READ);
    expect(outcome).toMatchObject({ kind: 'success', content: [{ type: 'text', text: 'ok' }], attempts: 1 });
    // It stopped reading: the server saw the stream it never ended closed.
    await waitUntil(() => closed);
  });
});

describe('answers that are not usable', () => {
  it('should refuse a JSON answer with the wrong id', async () => {
    const s = await peer({
      call: (req, res) =>
        sendJson(res, 200, { jsonrpc: '2.0', id: (req.id as number) + 1, result: { content: [] } }),
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, READ)).toMatchObject({
      kind: 'protocol_error',
      code: 'RESPONSE_ID_MISMATCH',
      attempts: 1,
    });
  });

  it('should cut a 50 MB body at the cap and not retry', async () => {
    let written = 0;
    const s = await peer({
      call: (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(256 * 1024, 0x20);
        const pump = (): void => {
          while (written < 50 * 1024 * 1024) {
            written += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        pump();
      },
    });
    const heapBefore = process.memoryUsage().heapUsed;
    const outcome = await client({ maxBodyBytes: 1024 * 1024 }).callTool(endpoint(s.url), 'big', {}, READ);
    expect(outcome).toMatchObject({
      kind: 'transport_error',
      code: 'BODY_TOO_LARGE',
      reachedServer: true,
      attempts: 1,
    });
    // Cut while streaming: the server never got to write anything near 50 MB.
    expect(written).toBeLessThan(20 * 1024 * 1024);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(30 * 1024 * 1024);
  });

  it('should refuse invalid JSON', async () => {
    const s = await peer({
      call: (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc":"2.0","id":');
      },
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, READ)).toMatchObject({
      kind: 'protocol_error',
      code: 'INVALID_JSON',
    });
  });

  it('should refuse HTML with status 200', async () => {
    const s = await peer({
      call: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<html><body>Welcome</body></html>');
      },
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, READ)).toMatchObject({
      kind: 'protocol_error',
      code: 'UNEXPECTED_CONTENT_TYPE',
      message: 'the answer is "text/html", not JSON or an event stream',
    });
  });

  it('should refuse a 202 without a body to a request', async () => {
    const s = await peer({
      call: (_req, res) => {
        res.writeHead(202);
        res.end();
      },
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, READ)).toMatchObject({
      kind: 'protocol_error',
      code: 'NO_RESPONSE',
    });
  });

  it('should report a JSON-RPC error as a protocol error that keeps the error', async () => {
    const s = await peer({
      call: (req, res) =>
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          error: { code: -32602, message: 'bad arguments', data: { field: 'q' } },
        }),
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, READ)).toMatchObject({
      kind: 'protocol_error',
      code: 'JSONRPC_ERROR',
      rpcError: { code: -32602, message: 'bad arguments', data: { field: 'q' } },
    });
  });

  it('should report a 500 with a short excerpt of its body, without a retry', async () => {
    const s = await peer({
      call: (_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`Internal\r\nServer Error ${'x'.repeat(10_000)}`);
      },
    });
    const outcome = await client().callTool(endpoint(s.url), 'x', {}, READ);
    expect(outcome).toMatchObject({ kind: 'http_error', status: 500, attempts: 1 });
    const excerpt = outcome.kind === 'http_error' ? outcome.bodyExcerpt : '';
    expect(excerpt.startsWith('Internal Server Error xxx')).toBe(true);
    expect(excerpt.length).toBe(501);
  });

  it('should report a 401 as auth_required with its WWW-Authenticate', async () => {
    const s = await peer({
      call: (_req, res) => {
        res.writeHead(401, { 'www-authenticate': 'Bearer resource_metadata="https://x.example/prm"' });
        res.end();
      },
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, WRITE)).toMatchObject({
      kind: 'auth_required',
      wwwAuthenticate: 'Bearer resource_metadata="https://x.example/prm"',
      attempts: 1,
    });
  });
});

describe('broken connections', () => {
  const resetMidBody: Handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
    res.write('{"jsonrpc":"2.0",');
    setTimeout(() => res.socket?.destroy(), 10);
  };

  it('should retry a READ call once after a reset mid-body', async () => {
    const s = await peer({ call: resetMidBody });
    const outcome = await client().callTool(endpoint(s.url), 'x', {}, READ);
    expect(outcome).toMatchObject({
      kind: 'transport_error',
      code: 'TRANSPORT_ERROR',
      reachedServer: true,
      attempts: 2,
    });
    // Both resets were seen as such, not waited out to the deadline (2 s), which would be a timeout.
    expect(s.count('tools/call')).toBe(2);
  });

  it('should not retry a WRITE call after a reset mid-body', async () => {
    const s = await peer({ call: resetMidBody });
    expect(await client().callTool(endpoint(s.url), 'x', {}, WRITE)).toMatchObject({
      kind: 'transport_error',
      code: 'TRANSPORT_ERROR',
      attempts: 1,
    });
  });

  it('should retry even a WRITE call when the connection was refused, since it never reached the server', async () => {
    const s = await startRawServer(() => undefined);
    const url = s.url;
    await s.close();
    const outcome: CallToolOutcome = await client().callTool(endpoint(url), 'x', {}, WRITE);
    expect(outcome).toMatchObject({
      kind: 'transport_error',
      code: 'CONNECT_FAILED',
      reachedServer: false,
      attempts: 2,
    });
  });

  it('should refuse a private address before sending anything', async () => {
    const outbound = new OutboundClient();
    cleanups.push(() => outbound.close());
    const outcome = await new McpClient(outbound).callTool(endpoint('https://10.0.0.7/mcp'), 'x', {}, WRITE);
    expect(outcome).toMatchObject({
      kind: 'transport_error',
      code: 'ADDRESS_REFUSED',
      reachedServer: false,
      attempts: 1,
    });
  });
});

describe('sessions from hostile servers', () => {
  const spaced: Handler = (req, res) =>
    sendJson(
      res,
      200,
      { jsonrpc: '2.0', id: req.id, result: initializeResult() },
      { 'mcp-session-id': 'has spaces in it' },
    );

  it('should refuse a session id with spaces in discovery', async () => {
    const s = await peer({ initialize: spaced });
    const err = await discoveryError(client().discover(endpoint(s.url)));
    expect(err.code).toBe('UPSTREAM_PROTOCOL_ERROR');
    expect(err.data.reason).toBe('SESSION_ID_INVALID');
    expect(s.count('tools/list')).toBe(0);
  });

  it('should refuse a session id with spaces in the session retry of a call', async () => {
    const s = await peer({
      initialize: spaced,
      call: (_req, res) =>
        sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'No session' } }),
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, READ)).toMatchObject({
      kind: 'protocol_error',
      code: 'SESSION_ID_INVALID',
      attempts: 1,
      resends: 0,
    });
    expect(s.count('tools/call')).toBe(1);
  });

  it('should report a server that keeps answering 400 after the handshake as an HTTP error', async () => {
    const s = await peer({
      call: (_req, res) =>
        sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request' } }),
    });
    expect(await client().callTool(endpoint(s.url), 'x', {}, READ)).toMatchObject({
      kind: 'http_error',
      status: 400,
      attempts: 1,
      resends: 1,
      bodyExcerpt: '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}',
    });
    expect(s.count('initialize')).toBe(1);
  });

  it('should refuse a server that negotiates another protocol revision', async () => {
    const s = await peer({
      initialize: (req, res) =>
        sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult('1999-01-01') }),
    });
    const err = await discoveryError(client().discover(endpoint(s.url)));
    expect(err.code).toBe('UNSUPPORTED_PROTOCOL_VERSION');
    expect(err.data.protocolVersion).toBe('1999-01-01');
    // The message names both versions: the one we asked for and the one the server answered.
    expect(err.message).toContain('we asked for protocol 2025-06-18 and the server answered "1999-01-01"');
  });

  it('should accept a 200 with a body as the answer to notifications/initialized', async () => {
    const s = await startRawServer((req, res) => {
      if (req.method === 'initialize')
        return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult() });
      if (req.method === 'notifications/initialized') return sendJson(res, 200, { ok: true });
      sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools: [tool('a')] } });
    });
    cleanups.push(() => s.close());
    expect((await client().discover(endpoint(s.url))).tools.map((t) => t.name)).toEqual(['a']);
  });
});

describe('hostile listings', () => {
  it('should stop on a cursor loop A -> B -> A', async () => {
    const next: Record<string, string> = { '': 'A', A: 'B', B: 'A' };
    const s = await peer({
      list: (req, res) => {
        const cursor = (req.body as { params?: { cursor?: string } }).params?.cursor ?? '';
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          result: { tools: [tool(`from_${cursor || 'start'}`)], nextCursor: next[cursor] },
        });
      },
    });
    const result = await client().discover(endpoint(s.url));
    expect(result.stopReason).toBe('REPEATED_CURSOR');
    expect(result.pages).toBe(3);
    expect(result.tools.map((t) => t.name)).toEqual(['from_start', 'from_A', 'from_B']);
  });

  it('should stop a cursor that never ends at 100 pages', async () => {
    let page = 0;
    const s = await peer({
      list: (req, res) => {
        page++;
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          result: { tools: [tool(`t${page}`)], nextCursor: `c${page}` },
        });
      },
    });
    const result = await client().discover(endpoint(s.url));
    expect(result.stopReason).toBe('PAGE_LIMIT');
    expect(result.pages).toBe(100);
    expect(result.tools).toHaveLength(100);
    // Read 100 pages, not one more. How long they take: `npm run bench -- mcp` ("endless tools/list cursor").
    expect(s.count('tools/list')).toBe(100);
  });

  it('should keep 300 tools and skip the rest as TOOL_LIMIT', async () => {
    const s = await peer({
      list: (req, res) => {
        const second = (req.body as { params?: { cursor?: string } }).params?.cursor === 'p2';
        const tools = Array.from({ length: 200 }, (_, i) => tool(`t${second ? 200 + i : i}`));
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          result: { tools, ...(second ? { nextCursor: 'p3' } : { nextCursor: 'p2' }) },
        });
      },
    });
    const result = await client().discover(endpoint(s.url));
    expect(result.stopReason).toBe('TOOL_LIMIT');
    expect(result.pages).toBe(2);
    // The server offered a third page, never read: discovery lists it among the skipped.
    expect(result.unreadPages).toBe(true);
    expect(result.tools).toHaveLength(300);
    expect(result.skipped).toHaveLength(100);
    expect(result.skipped[0]).toEqual({
      index: 300,
      name: 't300',
      reason: 'TOOL_LIMIT',
      detail: 'the connection already has 300 tools',
    });
  });

  it('should keep the first of duplicate names and skip a tool whose inputSchema is "string"', async () => {
    const s = await peer({
      list: (req, res) =>
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          result: {
            tools: [
              tool('dup', { description: 'first' }),
              tool('dup', { description: 'second' }),
              { name: 'stringy', inputSchema: 'string' },
              { description: 'nameless', inputSchema: { type: 'object' } },
              tool('ok'),
            ],
          },
        }),
    });
    const result = await client().discover(endpoint(s.url));
    expect(result.tools.map((t) => [t.name, t.description])).toEqual([
      ['dup', 'first'],
      ['ok', null],
    ]);
    expect(result.skipped).toEqual([
      {
        index: 1,
        name: 'dup',
        reason: 'DUPLICATE_NAME',
        detail: 'an earlier tool has the same name; the first one is kept',
      },
      {
        index: 2,
        name: 'stringy',
        reason: 'INPUT_SCHEMA_INVALID',
        detail: 'inputSchema must be an object schema, got "string"',
      },
      {
        index: 3,
        name: null,
        reason: 'NAME_MISSING',
        detail: 'a tool needs a non-empty string name, got a undefined',
      },
    ]);
  });

  it('should fail a discovery whose page has no tools array', async () => {
    const s = await peer({
      list: (req, res) => sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools: 'none' } }),
    });
    const err = await discoveryError(client().discover(endpoint(s.url)));
    expect(err.code).toBe('UPSTREAM_PROTOCOL_ERROR');
    expect(err.data.reason).toBe('INVALID_RESPONSE');
  });

  it('should fail a discovery when a page answers 500, and still end the session', async () => {
    const s = await peer({
      initialize: (req, res) =>
        sendJson(
          res,
          200,
          { jsonrpc: '2.0', id: req.id, result: initializeResult() },
          { 'mcp-session-id': 'sess-1' },
        ),
      list: (_req, res) => {
        res.writeHead(500);
        res.end('boom');
      },
    });
    const err = await discoveryError(client().discover(endpoint(s.url)));
    expect(err.code).toBe('UPSTREAM_HTTP_ERROR');
    expect(err.data).toEqual({ status: 500, bodyExcerpt: 'boom', wwwAuthenticate: null });
    const del = s.requests.find((r) => r.httpMethod === 'DELETE');
    expect(del?.headers['mcp-session-id']).toBe('sess-1');
  });
});
