/**
 * MCP peers for protocol-version tests, on random loopback ports.
 *
 * - `startLegacyVersionServer`: a hand-written server that speaks exactly one handshake revision
 *   (`2025-11-25`, `2025-03-26`, `2024-11-05`…): `initialize` answers that version whatever was
 *   asked, a later request whose `MCP-Protocol-Version` is another version gets 400, and
 *   `server/discover` gets what a legacy server gives it (400 with a `-32000` error).
 * - `startModernOnlyServer`: a hand-written 2026-07-28 server that rejects `initialize` with
 *   `UnsupportedProtocolVersionError`, validates the modern headers against the body (400
 *   `HeaderMismatch` otherwise), never mints a session, and has a tool that answers
 *   `resultType: "input_required"`.
 * - `startSdkV2Server`: `@modelcontextprotocol/server` 2.4.0, either `createMcpHandler` (stateless,
 *   modern with the stateless legacy fallback, or `legacy: 'reject'`) or a stateful legacy
 *   `WebStandardStreamableHTTPServerTransport` with sessions.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  fromJsonSchema,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import {
  acceptNotification,
  initializeResult,
  sendJson,
  startRawServer,
  type RawRequest,
  type RawServerHandle,
} from './mcp-servers.js';

export const ECHO_TOOL = {
  name: 'echo',
  title: 'Echo',
  description: 'Echoes its text.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnlyHint: true },
};

function params(req: RawRequest): Record<string, unknown> {
  const body = req.body as { params?: Record<string, unknown> } | undefined;
  return body?.params ?? {};
}

function echoResult(args: unknown): Record<string, unknown> {
  return { content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: { echo: args } };
}

/** A legacy server that speaks only `version`. */
export async function startLegacyVersionServer(version: string): Promise<RawServerHandle> {
  return startRawServer((req, res) => {
    if (req.httpMethod !== 'POST') {
      res.writeHead(405);
      res.end();
      return;
    }
    if (req.method === 'initialize') {
      sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult(version) });
      return;
    }
    const header = req.headers['mcp-protocol-version'];
    // 2024-11-05 and 2025-03-26 clients send no header; a header naming another version is refused.
    if (header !== undefined && header !== version) {
      sendJson(res, 400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: `Bad Request: Unsupported protocol version: ${String(header)}` },
      });
      return;
    }
    if (acceptNotification(req, res)) return;
    if (req.method === 'tools/list') {
      sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools: [ECHO_TOOL] } });
      return;
    }
    if (req.method === 'tools/call') {
      sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: echoResult(params(req).arguments) });
      return;
    }
    sendJson(res, 404, {
      jsonrpc: '2.0',
      id: req.id ?? null,
      error: { code: -32601, message: 'Method not found' },
    });
  });
}

const MODERN = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

function modernError(res: ServerResponse, id: unknown, code: number, message: string, data?: unknown): void {
  sendJson(res, 400, { jsonrpc: '2.0', id: id ?? null, error: { code, message, ...(data ? { data } : {}) } });
}

/** A server that speaks only 2026-07-28 and rejects `initialize`. */
export async function startModernOnlyServer(): Promise<RawServerHandle> {
  return startRawServer((req, res) => {
    if (req.httpMethod !== 'POST') {
      res.writeHead(405);
      res.end();
      return;
    }
    const p = params(req);
    const meta = (p._meta ?? {}) as Record<string, unknown>;
    const version = meta[META_VERSION];
    if (req.method === 'initialize' || version !== MODERN) {
      modernError(res, req.id, -32022, 'Unsupported protocol version', {
        supported: [MODERN],
        requested: req.method === 'initialize' ? p.protocolVersion : version,
      });
      return;
    }
    const h = req.headers;
    const nameHeader = typeof h['mcp-name'] === 'string' ? h['mcp-name'] : undefined;
    const decodedName = nameHeader?.startsWith('=?base64?')
      ? Buffer.from(nameHeader.slice(9, -2), 'base64').toString('utf8')
      : nameHeader;
    if (
      h['mcp-protocol-version'] !== MODERN ||
      h['mcp-method'] !== req.method ||
      typeof meta[META_CAPABILITIES] !== 'object' ||
      (req.method === 'tools/call' && decodedName !== p.name) ||
      h['mcp-session-id'] !== undefined
    ) {
      modernError(res, req.id, -32020, 'Header mismatch');
      return;
    }
    switch (req.method) {
      case 'server/discover':
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          result: {
            resultType: 'complete',
            supportedVersions: [MODERN],
            capabilities: { tools: {} },
            _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'modern-only', version: '1.0.0' } },
            instructions: 'Stateless.',
            ttlMs: 60_000,
            cacheScope: 'public',
          },
        });
        return;
      case 'tools/list':
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          result: {
            resultType: 'complete',
            tools: [
              ECHO_TOOL,
              {
                name: 'ask_user',
                description: 'Needs a person to confirm.',
                inputSchema: { type: 'object' },
                annotations: { readOnlyHint: true },
              },
            ],
            ttlMs: 300_000,
            cacheScope: 'private',
          },
        });
        return;
      case 'tools/call':
        if (p.name === 'ask_user') {
          sendJson(res, 200, {
            jsonrpc: '2.0',
            id: req.id,
            result: {
              resultType: 'input_required',
              inputRequests: {
                confirm: {
                  method: 'elicitation/create',
                  params: { mode: 'form', message: 'Confirm?', requestedSchema: { type: 'object' } },
                },
              },
              requestState: 'opaque',
            },
          });
          return;
        }
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: req.id,
          result: { resultType: 'complete', ...echoResult(p.arguments) },
        });
        return;
      default:
        sendJson(res, 404, {
          jsonrpc: '2.0',
          id: req.id,
          error: { code: -32601, message: 'Method not found' },
        });
    }
  });
}

export interface V2Request {
  httpMethod: string;
  method: string | undefined;
  headers: IncomingMessage['headers'];
  params: Record<string, unknown> | undefined;
}

export interface V2ServerHandle {
  url: string;
  requests: V2Request[];
  close(): Promise<void>;
}

export type V2Mode = 'stateless' | 'modern-only' | 'stateful';

function buildServer(): McpServer {
  const server = new McpServer({ name: 'sdk-v2-peer', version: '2.4.0' });
  server.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Echoes its text.',
      inputSchema: fromJsonSchema<{ text: string }>({
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
      }),
      annotations: { readOnlyHint: true },
    },
    (args: { text: string }) => ({
      content: [{ type: 'text', text: args.text }],
      structuredContent: { echo: args },
    }),
  );
  return server;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => (headers[key] = value));
  res.writeHead(response.status, headers);
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
}

/** `@modelcontextprotocol/server` 2.4.0 behind `node:http`. */
export async function startSdkV2Server(mode: V2Mode): Promise<V2ServerHandle> {
  const requests: V2Request[] = [];
  const handler =
    mode === 'stateful'
      ? null
      : createMcpHandler(() => buildServer(), { legacy: mode === 'modern-only' ? 'reject' : 'stateless' });
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const text = req.method === 'POST' ? await readBody(req) : '';
      let parsed: Record<string, unknown> | undefined;
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      } catch {
        parsed = undefined;
      }
      requests.push({
        httpMethod: req.method ?? '',
        method: typeof parsed?.method === 'string' ? parsed.method : undefined,
        headers: req.headers,
        params: parsed?.params as Record<string, unknown> | undefined,
      });
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? text : undefined,
      });
      if (handler) return writeResponse(res, await handler.fetch(request, { parsedBody: parsed }));
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (!transport) {
        if (parsed?.method !== 'initialize') {
          sendJson(res, 400, {
            jsonrpc: '2.0',
            id: null,
            error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
          });
          return;
        }
        const created = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, created);
          },
        });
        await buildServer().connect(created);
        transport = created;
      }
      await writeResponse(res, await transport.handleRequest(request, { parsedBody: parsed }));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: async () => {
      await handler?.close();
      for (const t of sessions.values()) await t.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
