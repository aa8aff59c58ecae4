/**
 * The MCP client against real servers built with @modelcontextprotocol/sdk, in all four shapes:
 * stateful or stateless, JSON or event-stream answers.
 */
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OutboundClient } from '../../../src/http/outbound.js';
import { type McpClient, McpClientError } from '../../../src/mcp/client.js';
import { parseSse } from '../../../src/mcp/sse.js';
import {
  startSdkServer,
  WWW_AUTHENTICATE,
  type PeerTool,
  type SdkServerHandle,
  type SdkServerOptions,
} from '../../support/mcp-servers.js';
import { cleanupAfterEach } from '../../support/cleanups.js';
import { mcpClient, mcpEndpoint } from '../../support/mcp-client.js';

const cleanups = cleanupAfterEach();

async function server(options: SdkServerOptions): Promise<SdkServerHandle> {
  const s = await startSdkServer(options);
  cleanups.push(() => s.close());
  return s;
}

const client = (options: ConstructorParameters<typeof McpClient>[1] = {}) => mcpClient(cleanups, options);

const endpoint = mcpEndpoint;

const tools: PeerTool[] = [
  {
    name: 'search',
    title: 'Search',
    description: 'Finds documents.',
    inputSchema: { q: z.string() },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  {
    name: 'delete_doc',
    description: 'Deletes a document.',
    inputSchema: { id: z.string() },
    annotations: { title: 'Delete document', destructiveHint: true },
  },
  {
    name: 'fail',
    description: 'Always fails.',
    handler: () => ({ isError: true, content: [{ type: 'text', text: 'the backend is down' }] }),
  },
  {
    name: 'chatty',
    description: 'Logs and reports progress before answering.',
    handler: async (_args, extra) => {
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: 'starting' },
      });
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: 'p', progress: 1, total: 2 },
      });
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: 'halfway' },
      });
      return { content: [{ type: 'text', text: 'done' }] };
    },
  },
];

const READ = { risk: 'READ', idempotent: true } as const;
const WRITE = { risk: 'WRITE', idempotent: false } as const;

const shapes = [
  { stateful: true, json: true },
  { stateful: true, json: false },
  { stateful: false, json: true },
  { stateful: false, json: false },
];

describe.each(shapes)('an SDK server (stateful: $stateful, json: $json)', ({ stateful, json }) => {
  it('should discover the tools, mapped, and end the session', async () => {
    const s = await server({ stateful, json, tools });
    const result = await client().discover(endpoint(s.url));
    expect(result.initialize).toEqual({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'test-peer', version: '1.0.0' },
      capabilities: expect.objectContaining({ tools: { listChanged: true } }) as unknown,
      instructions: null,
    });
    expect(result.stopReason).toBe('END');
    expect(result.pages).toBe(1);
    expect(result.skipped).toEqual([]);
    expect(
      result.tools.map(({ name, title, description, risk, idempotent }) => ({
        name,
        title,
        description,
        risk,
        idempotent,
      })),
    ).toEqual([
      { name: 'search', title: 'Search', description: 'Finds documents.', risk: 'READ', idempotent: true },
      {
        name: 'delete_doc',
        title: 'Delete document',
        description: 'Deletes a document.',
        risk: 'WRITE',
        idempotent: false,
      },
      { name: 'fail', title: null, description: 'Always fails.', risk: 'WRITE', idempotent: false },
      {
        name: 'chatty',
        title: null,
        description: 'Logs and reports progress before answering.',
        risk: 'WRITE',
        idempotent: false,
      },
    ]);
    expect(result.tools[0]?.inputSchema).toMatchObject({
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
    });
    // The modern probe first (a legacy server refuses it), then the legacy handshake.
    expect(s.requests.map((r) => r.method ?? r.httpMethod)).toEqual([
      'server/discover',
      'initialize',
      'notifications/initialized',
      'tools/list',
      ...(stateful ? ['DELETE'] : []),
    ]);
    expect(s.sessionIds()).toEqual([]);
    expect(s.requests[0]!.headers['mcp-protocol-version']).toBe('2026-07-28');
    for (const r of s.requests.slice(1)) expect(r.headers['mcp-protocol-version']).toBe('2025-06-18');
    if (stateful) expect(new Set(s.requests.map((r) => r.sessionId)).size).toBe(2); // none, then one
  });

  it('should call a tool, making a session first only where the server demands one', async () => {
    const s = await server({ stateful, json, tools });
    const c = client();
    const ep = endpoint(s.url);
    const first = await c.callTool(ep, 'search', { q: 'cats' }, READ);
    expect(first).toMatchObject({
      kind: 'success',
      content: [{ type: 'text', text: '{"q":"cats"}' }],
      structuredContent: { echo: { q: 'cats' } },
      attempts: 1,
      resends: stateful ? 1 : 0,
    });
    expect(s.count('initialize')).toBe(stateful ? 1 : 0);
    const second = await c.callTool(ep, 'search', { q: 'dogs' }, READ);
    expect(second).toMatchObject({ kind: 'success', attempts: 1, resends: 0 });
    expect(s.count('initialize')).toBe(stateful ? 1 : 0);
    const calls = s.requests.filter((r) => r.method === 'tools/call');
    expect(new Set(calls.map((r) => r.id)).size).toBe(calls.length);
    for (const r of s.requests) {
      expect(r.headers.accept).toBe('application/json, text/event-stream');
      expect(r.headers['mcp-protocol-version']).toBe('2025-06-18');
    }
  });

  it('should report isError as a tool error', async () => {
    const s = await server({ stateful, json, tools });
    expect(await client().callTool(endpoint(s.url), 'fail', {}, WRITE)).toMatchObject({
      kind: 'tool_error',
      content: [{ type: 'text', text: 'the backend is down' }],
      structuredContent: null,
    });
  });

  it('should report an unknown tool as the tool error that SDK 1.32.2 returns', async () => {
    const s = await server({ stateful, json, tools });
    const outcome = await client().callTool(endpoint(s.url), 'nope', {}, WRITE);
    expect(outcome.kind).toBe('tool_error');
    expect(outcome.kind === 'tool_error' && outcome.content).toEqual([
      { type: 'text', text: 'MCP error -32602: Tool nope not found' },
    ]);
  });

  it('should skip notifications sent before the answer', async () => {
    const s = await server({ stateful, json, tools });
    expect(await client().callTool(endpoint(s.url), 'chatty', {}, WRITE)).toMatchObject({
      kind: 'success',
      content: [{ type: 'text', text: 'done' }],
    });
  });

  it.runIf(!json)('should really receive those notifications on the stream, before the answer', async () => {
    const s = await server({ stateful: false, json, tools });
    const outbound = new OutboundClient({ allowLoopback: true });
    cleanups.push(() => outbound.close());
    const res = await outbound.request(s.url, {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'chatty', arguments: {} },
      }),
    });
    const kinds: string[] = [];
    for await (const event of parseSse(res.body)) {
      const msg = JSON.parse(event.data) as { method?: string; id?: number };
      kinds.push(msg.method ?? `answer ${msg.id}`);
    }
    expect(kinds).toEqual([
      'notifications/message',
      'notifications/progress',
      'notifications/message',
      'answer 1',
    ]);
  });

  it('should follow 250 tools in pages of 7', async () => {
    const many = Array.from({ length: 250 }, (_, i) => ({ name: `tool_${i}`, description: `Tool ${i}` }));
    const s = await server({ stateful, json, tools: many, pageSize: 7 });
    const result = await client().discover(endpoint(s.url));
    expect(result.tools.map((t) => t.name)).toEqual(many.map((t) => t.name));
    expect(result.pages).toBe(36);
    expect(result.stopReason).toBe('END');
    expect(s.count('tools/list')).toBe(36);
  });

  it('should follow an empty-string cursor as a cursor', async () => {
    const three = [{ name: 'a' }, { name: 'b' }, { name: 'c' }];
    const s = await server({
      stateful,
      json,
      tools: three,
      pageSize: 2,
      encodeCursor: (o) => (o === 2 ? '' : String(o)),
    });
    const result = await client().discover(endpoint(s.url));
    expect(result.tools.map((t) => t.name)).toEqual(['a', 'b', 'c']);
    expect(result.pages).toBe(2);
    expect(s.requests.filter((r) => r.method === 'tools/list').map((r) => r.params)).toEqual([
      {},
      { cursor: '' },
    ]);
  });

  it('should see a changed tool list on the next discovery', async () => {
    const s = await server({ stateful, json, tools: [{ name: 'a' }] });
    const c = client();
    const ep = endpoint(s.url);
    expect((await c.discover(ep)).tools.map((t) => t.name)).toEqual(['a']);
    s.setTools([{ name: 'a' }, { name: 'b', annotations: { readOnlyHint: true } }]);
    const again = await c.discover(ep);
    expect(again.tools.map((t) => [t.name, t.risk])).toEqual([
      ['a', 'WRITE'],
      ['b', 'READ'],
    ]);
  });

  it('should send the bearer key, and report a 401 with its WWW-Authenticate', async () => {
    const s = await server({ stateful, json, tools, requireAuthorization: 'Bearer right' });
    const c = client();
    const good = await c.callTool(
      endpoint(s.url, { auth: { kind: 'bearer', token: 'right' } }),
      'search',
      { q: 'x' },
      READ,
    );
    expect(good.kind).toBe('success');
    const bad = await c.callTool(
      endpoint(s.url, { auth: { kind: 'bearer', token: 'wrong' } }),
      'search',
      { q: 'x' },
      READ,
    );
    expect(bad).toMatchObject({ kind: 'auth_required', wwwAuthenticate: WWW_AUTHENTICATE, attempts: 1 });
    const err = await c.discover(endpoint(s.url)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpClientError);
    expect((err as McpClientError).code).toBe('AUTH_REQUIRED');
    expect((err as McpClientError).data.wwwAuthenticate).toBe(WWW_AUTHENTICATE);
  });
});

describe('an SDK server with sessions', () => {
  it('should pick up a session that the server ended, and retry once', async () => {
    const s = await server({ stateful: true, json: true, tools });
    const c = client();
    const ep = endpoint(s.url);
    expect((await c.callTool(ep, 'search', { q: '1' }, READ)).kind).toBe('success');
    const [ended] = s.sessionIds();
    await s.endSession(ended as string);
    const outcome = await c.callTool(ep, 'search', { q: '2' }, READ);
    expect(outcome).toMatchObject({ kind: 'success', attempts: 1, resends: 1 });
    expect(s.count('initialize')).toBe(2);
    expect(s.sessionIds()).toHaveLength(1);
    expect(s.sessionIds()[0]).not.toBe(ended);
  });

  it('should also take a 400 for an ended session as a reason to initialize again', async () => {
    const s = await server({ stateful: true, json: false, tools, unknownSessionStatus: 400 });
    const c = client();
    const ep = endpoint(s.url);
    await c.callTool(ep, 'search', { q: '1' }, READ);
    await s.endSession(s.sessionIds()[0] as string);
    expect(await c.callTool(ep, 'delete_doc', { id: '9' }, WRITE)).toMatchObject({
      kind: 'success',
      attempts: 1,
      resends: 1,
    });
    expect(s.count('initialize')).toBe(2);
  });

  it('should run one initialize for many calls that arrive together without a session', async () => {
    const s = await server({ stateful: true, json: true, tools });
    const c = client();
    const ep = endpoint(s.url);
    const outcomes = await Promise.all(
      Array.from({ length: 16 }, (_, i) => c.callTool(ep, 'search', { q: String(i) }, READ)),
    );
    expect(outcomes.every((o) => o.kind === 'success' && o.attempts === 1 && o.resends === 1)).toBe(true);
    expect(s.count('initialize')).toBe(1);
    expect(s.sessionIds()).toHaveLength(1);
  });

  it('should answer a ping that the server sends on the stream before it answers', async () => {
    const pinging: PeerTool = {
      name: 'pinging',
      handler: async (_args, extra) => {
        await extra.sendRequest({ method: 'ping' }, EmptyResultSchema);
        return { content: [{ type: 'text', text: 'pong received' }] };
      },
    };
    const s = await server({ stateful: true, json: false, tools: [pinging] });
    const outcome = await client().callTool(endpoint(s.url), 'pinging', {}, WRITE);
    expect(outcome).toMatchObject({ kind: 'success', content: [{ type: 'text', text: 'pong received' }] });
    expect(s.requests.filter((r) => r.isResponse)).toHaveLength(1);
  });

  it('should keep the session of initialize() for listTools() and later calls', async () => {
    const s = await server({ stateful: true, json: true, tools });
    const c = client();
    const ep = endpoint(s.url);
    expect((await c.initialize(ep)).protocolVersion).toBe('2025-06-18');
    const listing = await c.listTools(ep);
    expect(listing.tools).toHaveLength(4);
    expect(await c.callTool(ep, 'search', { q: 'x' }, READ)).toMatchObject({ kind: 'success', attempts: 1 });
    const [sid] = s.sessionIds();
    expect(
      s.requests
        .filter((r) => r.method === 'tools/list' || r.method === 'tools/call')
        .map((r) => r.sessionId),
    ).toEqual([sid, sid]);
    await c.endSession(ep);
    expect(s.sessionIds()).toEqual([]);
  });

  it('should send a named credential header and headers from getAuthHeaders', async () => {
    const s = await server({ stateful: false, json: true, tools });
    const c = client();
    await c.callTool(
      endpoint(s.url, {
        auth: { kind: 'header', name: 'X-Api-Key', value: 'k1' },
        getAuthHeaders: () => Promise.resolve({ Authorization: 'Bearer oauth-token' }),
      }),
      'search',
      { q: 'x' },
      READ,
    );
    expect(s.requests[0]?.headers['x-api-key']).toBe('k1');
    expect(s.requests[0]?.headers.authorization).toBe('Bearer oauth-token');
  });
});
