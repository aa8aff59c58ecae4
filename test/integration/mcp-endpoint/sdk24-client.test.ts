/**
 * The endpoint in protocol revision 2026-07-28 (issue 27, src/mcp-server/modern.ts): the SDK 2.4
 * client discovers, pages through the tools and hears of changes on `subscriptions/listen`; it
 * negotiates down to a legacy revision when asked to; and hostile requests of this revision get
 * the revision's own errors. (Its READ and WRITE calls, JSON and SSE: sdk2-client.test.ts.)
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointUrl, mintMcpClientToken } from '../../support/mcp-endpoint.js';
import { startCrmWorld, type CrmFixture } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

let f: CrmFixture;
let token: string;
const V = '2026-07-28';

beforeAll(async () => {
  f = await startCrmWorld('Sdk24', { env: { MCP_PAGE_SIZE: '2' } });
  token = await mintMcpClientToken(f.t, f.w, 'sdk24 client');
});
afterAll(async () => {
  await f.stop();
});

/** The `Mcp-Method` of each POST the clients send. */
const methods: string[] = [];

function client(mode: 'auto' | { pin: string }): {
  client: Client;
  transport: StreamableHTTPClientTransport;
} {
  const c = new Client({ name: 'sdk24-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(endpointUrl(f.t, f.w.assistantId), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: (url, init) => {
      const m = new Headers(init?.headers).get('mcp-method');
      if (m !== null) methods.push(m);
      return fetch(url, init);
    },
  });
  return { client: c, transport };
}

/** A hand-written POST of this revision: its `_meta`, headers and body, each changeable. */
async function post(
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}> {
  const res = await fetch(endpointUrl(f.t, f.w.assistantId), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

const meta = (version: string = V) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': {},
});

describe('the SDK 2.4 client, pinned to 2026-07-28', () => {
  it('discovers the revision, pages through the tools (cursor, 2 a page) and calls one', async () => {
    const { client: c, transport } = client({ pin: V });
    await c.connect(transport);
    try {
      expect(c.getNegotiatedProtocolVersion()).toBe(V);
      // Without a cursor the client walks every page itself: MCP_PAGE_SIZE 2, so three requests.
      const all = await c.listTools();
      expect(all.nextCursor).toBeUndefined();
      expect(methods.filter((m) => m === 'tools/list')).toHaveLength(3);
      const names = all.tools.map((t) => t.name);
      expect(names.sort()).toEqual([
        'sdk24__fails',
        'sdk24__lookup',
        'sdk24__slow_read',
        'sdk24__slow_write',
        'sdk24__update',
      ]);
      const read = await c.callTool({ name: 'sdk24__lookup', arguments: { email: 'page@example.com' } });
      expect(read.isError).toBeFalsy();
    } finally {
      await c.close();
    }
  });

  it('hears notifications/tools/list_changed on subscriptions/listen when the tools change', async () => {
    const { client: c, transport } = client({ pin: V });
    await c.connect(transport);
    let heard = 0;
    c.setNotificationHandler('notifications/tools/list_changed', () => {
      heard++;
    });
    const sub = await c.listen({ toolsListChanged: true });
    try {
      f.t.app.services.toolCache.invalidate({ kind: 'assistant', id: 'x', workspaceId: 'x' });
      await waitUntil(() => heard > 0, 5);
      expect(heard).toBeGreaterThan(0);
    } finally {
      await sub.close();
      await c.close();
    }
  });
  it('a listen stream closes when its token is revoked', async () => {
    const made = await f.t.ok<
      { createApiToken: { secret: string; apiToken: { id: string } } },
      { a: string }
    >(
      'mutation($a: ID!) { createApiToken(input: { label: "revoked soon", role: MCP_CLIENT, assistantId: $a }) { secret apiToken { id } } }',
      { a: f.w.assistantId },
      f.w.admin,
    );
    const c = new Client(
      { name: 'sdk24-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: V } } },
    );
    await c.connect(
      new StreamableHTTPClientTransport(endpointUrl(f.t, f.w.assistantId), {
        requestInit: { headers: { authorization: `Bearer ${made.createApiToken.secret}` } },
      }),
    );
    try {
      const sub = await c.listen({ toolsListChanged: true });
      let ended: string | null = null;
      void sub.closed.then((how) => (ended = how));
      await f.t.ok(
        'mutation($id: ID!) { revokeApiToken(input: { id: $id }) { apiToken { id } } }',
        { id: made.createApiToken.apiToken.id },
        f.w.admin,
      );
      await waitUntil(() => ended !== null, 5);
      expect(ended).toBe('remote');
    } finally {
      await c.close();
    }
  });
});

it('the SDK 2.4 client negotiates: auto finds 2026-07-28; its legacy default gets 2025-11-25', async () => {
  // auto: server/discover answers 2026-07-28, so the client speaks it.
  const auto = client('auto');
  await auto.client.connect(auto.transport);
  expect(auto.client.getNegotiatedProtocolVersion()).toBe(V);
  await auto.client.close();
  // The legacy default: initialize, 2025-11-25, a session.
  const legacy = new Client({ name: 'sdk24-test', version: '1.0.0' });
  const t = new StreamableHTTPClientTransport(endpointUrl(f.t, f.w.assistantId), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await legacy.connect(t);
  expect(legacy.getNegotiatedProtocolVersion()).toBe('2025-11-25');
  expect((await legacy.listTools()).tools.length).toBe(5);
  await legacy.close();
});

describe('hostile requests of 2026-07-28', () => {
  it('server/discover names the revision; tools/list carries resultType and the cache hint', async () => {
    const discover = await post(
      { method: 'server/discover', params: { _meta: meta() } },
      { 'mcp-method': 'server/discover' },
    );
    expect(discover.status).toBe(200);
    expect(discover.body.result).toMatchObject({ supportedVersions: expect.arrayContaining([V]) });
    const list = await post(
      { method: 'tools/list', params: { _meta: meta() } },
      { 'mcp-method': 'tools/list' },
    );
    expect(list.body.result).toMatchObject({ resultType: 'complete', ttlMs: 1000, cacheScope: 'private' });
    // Pages of MCP_PAGE_SIZE (2), each cursor leading to the next; a forged cursor is refused.
    const seen: unknown[] = [];
    let result = list.body.result!;
    for (let i = 0; i < 5 && result.nextCursor !== undefined; i++) {
      expect((result.tools as unknown[]).length).toBe(2);
      seen.push(...(result.tools as unknown[]));
      const next = await post(
        { method: 'tools/list', params: { _meta: meta(), cursor: result.nextCursor } },
        { 'mcp-method': 'tools/list' },
      );
      result = next.body.result!;
    }
    seen.push(...(result.tools as unknown[]));
    expect(seen).toHaveLength(5);
    const forged = await post(
      { method: 'tools/list', params: { _meta: meta(), cursor: 'bm90IG91cnM' } },
      { 'mcp-method': 'tools/list' },
    );
    expect(forged.body.error?.code).toBe(-32602);
  });

  it('Mcp-Method not matching the body: -32020', async () => {
    const r = await post({ method: 'tools/list', params: { _meta: meta() } }, { 'mcp-method': 'tools/call' });
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32020);
  });

  it('Mcp-Name not matching params.name: -32020', async () => {
    const r = await post(
      {
        method: 'tools/call',
        params: { _meta: meta(), name: 'sdk24__update', arguments: { email: 'x@example.com', plan: 'pro' } },
      },
      { 'mcp-method': 'tools/call', 'mcp-name': 'sdk24__lookup' },
    );
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32020);
  });

  it('the header names 2026-07-28 but _meta has no protocol version: refused', async () => {
    const r = await post({ method: 'tools/list', params: {} }, { 'mcp-method': 'tools/list' });
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32602);
  });

  it('an unsupported version: -32022 naming what is supported', async () => {
    const r = await post(
      { method: 'tools/list', params: { _meta: meta('2099-01-01') } },
      { 'mcp-method': 'tools/list', 'mcp-protocol-version': '2099-01-01' },
    );
    expect(r.body.error?.code).toBe(-32022);
    expect(JSON.stringify(r.body.error)).toContain(V);
  });

  it("NUL bytes in arguments are the tool call's own refusal or answer, never a crash", async () => {
    const r = await post(
      {
        method: 'tools/call',
        params: { _meta: meta(), name: 'sdk24__lookup', arguments: { email: 'a\u0000b@example.com' } },
      },
      { 'mcp-method': 'tools/call', 'mcp-name': 'sdk24__lookup' },
    );
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ resultType: 'complete' });
  });
});
