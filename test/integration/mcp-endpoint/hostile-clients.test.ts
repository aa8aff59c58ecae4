/**
 * Hostile clients of the MCP endpoint (issue 27), over raw HTTP: a page of another origin (DNS
 * rebinding), an oversized body, 10,000 ids in a batch, a deep JSON body, NUL bytes in arguments,
 * GET streams opened and never read (bounded per instance, closed when their token is revoked).
 * Each is refused with its status or carried safely; none is a 500.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  endpointUrl,
  initializeMessage,
  mcpClientTokenOf,
  mintMcpClientToken,
  mcpRequest,
  recordedCalls,
} from '../../support/mcp-endpoint.js';
import { startCrmWorld, type CrmFixture } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

let f: CrmFixture;
let token: string;
let url: URL;

beforeAll(async () => {
  f = await startCrmWorld('Hostile', {
    env: {
      MCP_ALLOWED_ORIGINS: 'https://app.example.com',
      MCP_MAX_BODY_BYTES: '65536',
      MCP_STREAMS_MAX: '2',
    },
  });
  token = await mintMcpClientToken(f.t, f.w, 'hostile');
  url = endpointUrl(f.t, f.w.assistantId);
});
afterAll(async () => {
  await f.stop();
});

it('refuses a request from an Origin not allowed with 403, before the token; allowed or absent Origin passes', async () => {
  for (const origin of ['https://evil.example', 'null']) {
    const res = await mcpRequest(url, token, { body: initializeMessage(), headers: { origin } });
    expect(res.status, origin).toBe(403);
    expect(await res.text()).not.toContain(token);
    // Without a token too: the Origin is checked first.
    expect((await mcpRequest(url, null, { body: initializeMessage(), headers: { origin } })).status).toBe(
      403,
    );
  }
  const allowed = await mcpRequest(url, token, {
    body: initializeMessage(),
    headers: { origin: 'https://app.example.com' },
  });
  expect(allowed.status).toBe(200);
  await allowed.arrayBuffer();
  const none = await mcpRequest(url, token, { body: initializeMessage() });
  expect(none.status).toBe(200);
  await none.arrayBuffer();
});

it('answers an oversized body 413, a batch of 10,000 ids and a deep body 400, never 500', async () => {
  const big = await mcpRequest(url, token, { body: 'x'.repeat(70_000) });
  expect(big.status).toBe(413);
  await big.arrayBuffer();
  const batch = Array.from({ length: 10_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
  const many = await mcpRequest(url, token, {
    body: batch.slice(0, 100),
    headers: { 'mcp-protocol-version': '2025-03-26' },
  });
  expect(many.status).toBe(400);
  await many.arrayBuffer();
  const full = await mcpRequest(url, token, {
    body: batch,
    headers: { 'mcp-protocol-version': '2025-03-26' },
  });
  expect([400, 413]).toContain(full.status);
  await full.arrayBuffer();
  const deep = await mcpRequest(url, token, { body: `${'['.repeat(5_000)}${']'.repeat(5_000)}` });
  expect(deep.status).toBeLessThan(500);
  expect(deep.status).toBeGreaterThanOrEqual(400);
  await deep.arrayBuffer();
});

it('carries NUL bytes in arguments to the tool as the model sent them, or refuses them; never a 500', async () => {
  const email = 'nul\u0000byte@example.com';
  const res = await mcpRequest(url, token, {
    body: {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'hostile__lookup', arguments: { email } },
    },
    headers: { 'mcp-protocol-version': '2025-11-25' },
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as {
    result?: { isError?: boolean; content: unknown[] };
    error?: unknown;
  };
  expect(answer.result).toBeDefined();
  if (!answer.result!.isError) {
    // What reached the tool server is what the model sent (the CRM peer echoes its arguments).
    const text = (answer.result!.content[0] as { text: string }).text;
    expect((JSON.parse(text) as { email: string }).email).toBe(email);
  } else {
    const [row] = await recordedCalls(f.t, f.w.assistantId, 'hostile__lookup', {});
    expect(row?.status).not.toBe('SUCCEEDED');
  }
});

/** A `GET` stream whose body is never read: its response, and whether the service closed it. */
function openUnreadStream(
  secret: string,
): Promise<{ res: IncomingMessage; req: ClientRequest; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const req = httpRequest(
      url,
      { method: 'GET', headers: { authorization: `Bearer ${secret}`, accept: 'text/event-stream' } },
      (res) => {
        res.pause(); // never read
        res.once('close', () => (closed = true));
        resolve({ res, req, closed: () => closed });
      },
    );
    req.once('error', reject);
    req.end();
  });
}

it('holds at most MCP_STREAMS_MAX unread GET streams (503 past it), and closes them when their token is revoked', async () => {
  const revoked = await mcpClientTokenOf(f.t, f.w, 'streams, revoked soon');
  const streams = [await openUnreadStream(revoked.secret), await openUnreadStream(revoked.secret)];
  try {
    for (const s of streams) expect(s.res.statusCode).toBe(200);
    const third = await openUnreadStream(token);
    expect(third.res.statusCode).toBe(503);
    expect(third.res.headers['retry-after']).toBe('5');
    third.req.destroy();
    // The service answers other requests while the streams sit unread.
    const list = await mcpRequest(url, token, { body: initializeMessage() });
    expect(list.status).toBe(200);
    await list.arrayBuffer();
    await f.t.ok(
      'mutation($id: ID!) { revokeApiToken(input: { id: $id }) { apiToken { id } } }',
      { id: revoked.id },
      f.w.admin,
    );
    await waitUntil(() => streams.every((s) => s.closed()), 5);
    // Their slots are free again.
    const again = await openUnreadStream(token);
    expect(again.res.statusCode).toBe(200);
    again.req.destroy();
  } finally {
    for (const s of streams) s.req.destroy();
  }
});
