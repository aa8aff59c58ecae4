/**
 * Issue 14, items 1 and 2: protocol versions against real servers. Legacy servers of each
 * handshake revision, the 2026-07-28 stateless revision (a hand-written modern-only server and
 * `@modelcontextprotocol/server` 2.4.0), and `@modelcontextprotocol/server-everything`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {} from '../../../src/http/outbound.js';
import { McpClientError } from '../../../src/mcp/client.js';
import {
  startLegacyVersionServer,
  startModernOnlyServer,
  startSdkV2Server,
} from '../../support/mcp-version-servers.js';
import { cleanupAfterEach } from '../../support/cleanups.js';
import { mcpClient, mcpEndpoint } from '../../support/mcp-client.js';

const cleanups = cleanupAfterEach();

const client = () => mcpClient(cleanups);

const endpoint = mcpEndpoint;

const READ = { risk: 'READ', idempotent: false } as const;

describe('legacy servers that speak one handshake revision', () => {
  it.each(['2025-11-25', '2025-03-26', '2024-11-05'])(
    'should negotiate %s, send it on every later request, and call with it',
    async (version) => {
      const s = await startLegacyVersionServer(version);
      cleanups.push(() => s.close());
      const c = client();
      const found = await c.discover(endpoint(s.url));
      expect(found.era).toBe('legacy');
      expect(found.initialize.protocolVersion).toBe(version);
      expect(found.tools.map((t) => [t.name, t.title])).toEqual([['echo', 'Echo']]);
      expect(s.requests.map((r) => r.method)).toEqual([
        'server/discover',
        'initialize',
        'notifications/initialized',
        'tools/list',
      ]);
      for (const r of s.requests.slice(2)) expect(r.headers['mcp-protocol-version']).toBe(version);

      // A call from a process without a session: the stored version goes in the header.
      const outcome = await c.callTool(
        endpoint(s.url, { protocolVersion: version }),
        'echo',
        { text: 'hi' },
        READ,
      );
      expect(outcome).toMatchObject({ kind: 'success', structuredContent: { echo: { text: 'hi' } } });
      expect(s.requests.at(-1)).toMatchObject({ method: 'tools/call' });
      expect(s.requests.at(-1)!.headers['mcp-protocol-version']).toBe(version);
    },
  );
});

describe('the 2026-07-28 stateless revision', () => {
  it('should discover a modern-only server with server/discover and tools/list: no handshake, no session', async () => {
    const s = await startModernOnlyServer();
    cleanups.push(() => s.close());
    const found = await client().discover(endpoint(s.url));
    expect(found.era).toBe('modern');
    expect(found.initialize).toEqual({
      protocolVersion: '2026-07-28',
      serverInfo: { name: 'modern-only', version: '1.0.0' },
      capabilities: { tools: {} },
      instructions: 'Stateless.',
    });
    expect(found.cache).toEqual({ ttlMs: 300_000, cacheScope: 'private' });
    expect(found.tools.map((t) => t.name)).toEqual(['echo', 'ask_user']);
    expect(s.requests.map((r) => r.method)).toEqual(['server/discover', 'tools/list']);
    for (const r of s.requests) {
      expect(r.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(r.headers['mcp-method']).toBe(r.method);
      expect(r.headers['mcp-session-id']).toBeUndefined();
      expect((r.body as { params: { _meta: Record<string, unknown> } }).params._meta).toMatchObject({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      });
    }
  });

  it('should call statelessly with _meta, Mcp-Method and Mcp-Name', async () => {
    const s = await startModernOnlyServer();
    cleanups.push(() => s.close());
    const outcome = await client().callTool(
      endpoint(s.url, { protocolVersion: '2026-07-28' }),
      'echo',
      { text: 'hi' },
      READ,
    );
    expect(outcome).toMatchObject({
      kind: 'success',
      attempts: 1,
      structuredContent: { echo: { text: 'hi' } },
    });
    const call = s.requests.at(-1)!;
    expect(s.requests).toHaveLength(1);
    expect(call.headers).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'echo',
    });
  });

  it('should turn a result that asks for more input into a clear outcome', async () => {
    const s = await startModernOnlyServer();
    cleanups.push(() => s.close());
    const outcome = await client().callTool(
      endpoint(s.url, { protocolVersion: '2026-07-28' }),
      'ask_user',
      {},
      READ,
    );
    expect(outcome).toMatchObject({ kind: 'input_required', needs: 'an answer from the user' });
  });

  it('should fall back to the handshake when a server stored as modern answers like a legacy one', async () => {
    const s = await startLegacyVersionServer('2025-06-18');
    cleanups.push(() => s.close());
    const outcome = await client().callTool(
      endpoint(s.url, { protocolVersion: '2026-07-28' }),
      'echo',
      { text: 'x' },
      READ,
    );
    expect(outcome).toMatchObject({ kind: 'success', attempts: 1, resends: 1 });
    expect(s.requests.map((r) => r.method)).toEqual([
      'tools/call',
      'initialize',
      'notifications/initialized',
      'tools/call',
    ]);
    expect(s.requests.at(-1)!.headers['mcp-protocol-version']).toBe('2025-06-18');
  });
});

describe('@modelcontextprotocol/server 2.4.0', () => {
  it.each(['stateless', 'modern-only'] as const)(
    'should speak 2026-07-28 to createMcpHandler (%s) without initialize',
    async (mode) => {
      const s = await startSdkV2Server(mode);
      cleanups.push(() => s.close());
      const c = client();
      const found = await c.discover(endpoint(s.url));
      expect(found.era).toBe('modern');
      expect(found.initialize.protocolVersion).toBe('2026-07-28');
      expect(found.initialize.serverInfo).toMatchObject({ name: 'sdk-v2-peer', version: '2.4.0' });
      expect(found.tools.map((t) => [t.name, t.title, t.risk])).toEqual([['echo', 'Echo', 'READ']]);
      expect(s.requests.map((r) => r.method)).not.toContain('initialize');
      const outcome = await c.callTool(
        endpoint(s.url, { protocolVersion: found.initialize.protocolVersion }),
        'echo',
        { text: 'v2' },
        READ,
      );
      expect(outcome).toMatchObject({ kind: 'success', structuredContent: { echo: { text: 'v2' } } });
      expect(s.requests.at(-1)!.headers['mcp-name']).toBe('echo');
    },
  );

  it('should be refused the handshake by a modern-only endpoint, which discovery never needs', async () => {
    const s = await startSdkV2Server('modern-only');
    cleanups.push(() => s.close());
    const err = await client()
      .initialize(endpoint(s.url))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(McpClientError);
    expect((err as McpClientError).code).toBe('UPSTREAM_HTTP_ERROR');
  });

  it('should negotiate 2025-06-18 with a stateful legacy transport and keep its session', async () => {
    const s = await startSdkV2Server('stateful');
    cleanups.push(() => s.close());
    const c = client();
    const found = await c.discover(endpoint(s.url));
    expect(found.era).toBe('legacy');
    expect(found.initialize.protocolVersion).toBe('2025-06-18');
    const ep = endpoint(s.url, { protocolVersion: '2025-06-18' });
    const outcome = await c.callTool(ep, 'echo', { text: 'again' }, READ);
    expect(outcome).toMatchObject({ kind: 'success', attempts: 1, resends: 1 });
    const calls = s.requests.filter((r) => r.method === 'tools/call');
    expect(calls.at(-1)!.headers['mcp-session-id']).toBeDefined();
    expect(calls.at(-1)!.headers['mcp-protocol-version']).toBe('2025-06-18');
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function startEverything(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const entry = fileURLToPath(
    new URL('../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
  );
  const child = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; i < 200; i++) {
    const up = await fetch(url, { method: 'GET' }).then(
      () => true,
      () => false,
    );
    if (up) return { url, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('server-everything did not start');
}

describe('@modelcontextprotocol/server-everything', () => {
  it('should discover it as a legacy server on 2025-06-18 and call its echo tool', async () => {
    const { url, child } = await startEverything();
    cleanups.push(async () => {
      child.kill();
    });
    const c = client();
    const found = await c.discover(endpoint(url, { timeoutMs: 10_000 }));
    expect(found.era).toBe('legacy');
    expect(found.initialize.protocolVersion).toBe('2025-06-18');
    expect(found.tools.map((t) => t.name)).toContain('echo');
    const outcome = await c.callTool(
      endpoint(url, { protocolVersion: '2025-06-18', timeoutMs: 10_000 }),
      'echo',
      { message: 'hello' },
      READ,
    );
    expect(outcome.kind).toBe('success');
    expect(JSON.stringify(outcome)).toContain('hello');
  }, 30_000);
});
