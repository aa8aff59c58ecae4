/**
 * Real MCP peers for tests, on random loopback ports.
 *
 * - `startSdkServer` serves tools with the official SDK (`McpServer` + `StreamableHTTPServerTransport`)
 *   in any of the four shapes: stateful or stateless, JSON or SSE answers. The tool list can change
 *   between discoveries (`setTools`), `tools/list` can be paged, and every request is recorded.
 * - `startRawServer` is a bare `node:http` server for hostile behaviour: the handler owns the socket;
 *   `startLegacyPeer` and `startRawToolPeer` are legacy MCP peers on it that answer the handshake.
 *
 * Every handle has `close()`, which also drops open connections, so a hanging test server never
 * holds the run open.
 */
import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  type ServerNotification,
  type ServerRequest,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodRawShape } from 'zod';

export type PeerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface PeerTool {
  name: string;
  title?: string;
  description?: string;
  /** Zod shape of the arguments; extra arguments pass through. Default: no declared arguments. */
  inputSchema?: ZodRawShape;
  annotations?: ToolAnnotations;
  /** Zod shape of `structuredContent`, listed as the tool's `outputSchema`. Default: none. */
  outputSchema?: ZodRawShape;
  /** Default: echoes the arguments as text and as `structuredContent`. */
  handler?: (args: Record<string, unknown>, extra: PeerExtra) => CallToolResult | Promise<CallToolResult>;
}

export interface SdkServerOptions {
  /** Sessions (`sessionIdGenerator: randomUUID`), routed by `Mcp-Session-Id`; else a new server per request. */
  stateful: boolean;
  /** `enableJsonResponse`: answers as JSON; else as an event stream. */
  json: boolean;
  tools: PeerTool[];
  /** Pages `tools/list` with a handler of ours, this many tools per page. */
  pageSize?: number;
  /** The cursor of the page that starts at `offset`. Default: the offset as a string. */
  encodeCursor?: (offset: number) => string;
  /** Status for a request with an unknown or ended session id. Default 404; SDK examples use 400. */
  unknownSessionStatus?: 400 | 404;
  /** If set, requests without exactly this `Authorization` get 401 with a `WWW-Authenticate`. */
  requireAuthorization?: string;
  /** Keep `requests` (default true). Benchmarks turn it off. */
  record?: boolean;
}

export interface RecordedRequest {
  httpMethod: string;
  /** JSON-RPC method, or `undefined` for a response or a bodiless request. */
  method: string | undefined;
  id: unknown;
  params: unknown;
  /** A JSON-RPC response the client POSTed (to a server request such as `ping`). */
  isResponse: boolean;
  sessionId: string | undefined;
  headers: IncomingHttpHeaders;
}

export interface SdkServerHandle {
  url: string;
  /** Every HTTP request, in arrival order. */
  requests: RecordedRequest[];
  /** How many requests had this JSON-RPC method. */
  count(method: string): number;
  /** Replaces the tools. Stateless: from the next request; stateful: for sessions created from now on. */
  setTools(tools: PeerTool[]): void;
  /** Open sessions (stateful only). */
  sessionIds(): string[];
  /** Ends a session on the server side, as an expiry would; later requests with it get `unknownSessionStatus`. */
  endSession(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

export const WWW_AUTHENTICATE =
  'Bearer resource_metadata="https://peer.example/.well-known/oauth-protected-resource"';

function echo(args: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: { echo: args } };
}

function inputObject(tool: PeerTool) {
  return z.object(tool.inputSchema ?? {}).passthrough();
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function jsonRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/mcp`;
}

async function shutdown(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

function record(req: IncomingMessage, body: unknown): RecordedRequest {
  const msg = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const sid = req.headers['mcp-session-id'];
  return {
    httpMethod: req.method ?? '',
    method: typeof msg.method === 'string' ? msg.method : undefined,
    id: msg.id,
    params: msg.params,
    isResponse: msg.method === undefined && ('result' in msg || 'error' in msg),
    sessionId: typeof sid === 'string' ? sid : undefined,
    headers: req.headers,
  };
}

/** Starts an SDK-built MCP server on a random loopback port. */
export async function startSdkServer(options: SdkServerOptions): Promise<SdkServerHandle> {
  const {
    stateful,
    json,
    pageSize,
    encodeCursor = (offset) => String(offset),
    unknownSessionStatus = 404,
    record: keep = true,
  } = options;
  let tools = options.tools;
  const requests: RecordedRequest[] = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; mcp: McpServer }>();

  const build = (): McpServer => {
    const mcp = new McpServer(
      { name: 'test-peer', version: '1.0.0' },
      { capabilities: { logging: {}, tools: {} } },
    );
    for (const tool of tools) {
      const handler = tool.handler ?? echo;
      mcp.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: inputObject(tool),
          ...(tool.outputSchema ? { outputSchema: z.object(tool.outputSchema) } : {}),
          annotations: tool.annotations,
        },
        (args: Record<string, unknown>, extra: PeerExtra) => handler(args, extra),
      );
    }
    if (pageSize !== undefined) {
      const listed = tools.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: toJsonSchemaCompat(inputObject(t), { strictUnions: true, pipeStrategy: 'input' }),
        annotations: t.annotations,
      }));
      const offsets = new Map<string, number>();
      for (let offset = pageSize; offset < listed.length; offset += pageSize)
        offsets.set(encodeCursor(offset), offset);
      if (tools.length > 0) mcp.server.removeRequestHandler('tools/list');
      mcp.server.setRequestHandler(ListToolsRequestSchema, (request) => {
        const cursor = request.params?.cursor;
        const offset = cursor === undefined ? 0 : offsets.get(cursor);
        if (offset === undefined) throw new McpError(ErrorCode.InvalidParams, 'unknown cursor');
        const next = offset + pageSize;
        return {
          tools: listed.slice(offset, next) as never,
          ...(next < listed.length ? { nextCursor: encodeCursor(next) } : {}),
        };
      });
    }
    return mcp;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = req.method === 'POST' ? await readBody(req) : '';
    const body = parseJson(text);
    if (keep) requests.push(record(req, body));
    if (
      options.requireAuthorization !== undefined &&
      req.headers.authorization !== options.requireAuthorization
    ) {
      res.writeHead(401, { 'www-authenticate': WWW_AUTHENTICATE, 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    if (!stateful) {
      if (req.method !== 'POST') {
        jsonRpcError(res, 405, 'Method not allowed.');
        return;
      }
      const mcp = build();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: json,
      });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const session = sessions.get(sid);
      if (!session) {
        jsonRpcError(res, unknownSessionStatus, 'Session not found');
        return;
      }
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      const mcp = build();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, mcp });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    jsonRpcError(res, 400, 'Bad Request: No valid session ID provided');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const url = await listen(server);

  return {
    url,
    requests,
    count: (method) => requests.filter((r) => r.method === method).length,
    setTools: (next) => {
      tools = next;
    },
    sessionIds: () => [...sessions.keys()],
    endSession: async (sessionId) => {
      const session = sessions.get(sessionId);
      sessions.delete(sessionId);
      await session?.transport.close();
      await session?.mcp.close();
    },
    close: async () => {
      for (const { transport, mcp } of sessions.values()) {
        await transport.close();
        await mcp.close();
      }
      sessions.clear();
      await shutdown(server);
    },
  };
}

export interface RawRequest {
  httpMethod: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or `undefined`. */
  body: unknown;
  /** JSON-RPC method of the body, if any. */
  method: string | undefined;
  id: unknown;
}

export type RawHandler = (req: RawRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface RawServerHandle {
  url: string;
  requests: RawRequest[];
  count(method: string): number;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** A bare `node:http` server on a random loopback port: the handler decides everything. */
export async function startRawServer(handler: RawHandler): Promise<RawServerHandle> {
  const requests: RawRequest[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const text = req.method === 'POST' || req.method === 'PUT' ? await readBody(req) : '';
      const body = parseJson(text);
      const msg = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
      const entry: RawRequest = {
        httpMethod: req.method ?? '',
        headers: req.headers,
        body,
        method: typeof msg.method === 'string' ? msg.method : undefined,
        id: msg.id,
      };
      requests.push(entry);
      await handler(entry, res, req);
    })().catch(() => {
      res.destroy();
    });
  });
  server.on('connection', () => connections++);
  const url = await listen(server);
  return {
    url,
    requests,
    count: (method) => requests.filter((r) => r.method === method).length,
    connections: () => connections,
    close: () => shutdown(server),
  };
}

/** Writes a JSON body. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Answers a notification (a body without id) with 202, as the spec says. Returns whether it did. */
export function acceptNotification(req: RawRequest, res: ServerResponse): boolean {
  if (req.httpMethod === 'POST' && req.method !== undefined && req.id === undefined) {
    res.writeHead(202);
    res.end();
    return true;
  }
  return false;
}

/** A minimal, valid `initialize` result. */
export function initializeResult(protocolVersion = '2025-06-18'): Record<string, unknown> {
  return { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw-peer', version: '0.0.1' } };
}

/**
 * A legacy (2025-06-18) MCP peer on a bare `node:http` server that leaves the rest to the test:
 * DELETE gets 405, notifications 202 and `initialize` a minimal result; every other request
 * (`server/discover` included, which then falls back to the handshake) goes to `onRequest`.
 */
export async function startLegacyPeer(onRequest: RawHandler): Promise<RawServerHandle> {
  return startRawServer((req, res, raw) => {
    if (req.httpMethod === 'DELETE') return void res.writeHead(405).end();
    if (acceptNotification(req, res)) return;
    if (req.method === 'initialize')
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult() });
    return onRequest(req, res, raw);
  });
}

/** `lookup` (read-only) and `update` (a write): the tools a {@link startRawToolPeer} lists unless told. */
export const LOOKUP_AND_UPDATE: readonly Record<string, unknown>[] = [
  {
    name: 'lookup',
    description: 'Look up',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
  },
  { name: 'update', description: 'Update', inputSchema: { type: 'object' } },
];

/**
 * Answers a `tools/call`: `reply(result)` sends the result now; not calling it leaves the call
 * unanswered (the test may answer `res` later, with {@link sendJson}).
 */
export type RawCallHandler = (req: RawRequest, res: ServerResponse, reply: (result: unknown) => void) => void;

/**
 * A legacy (2025-06-18) MCP tool server on a bare `node:http` server: notifications get 202,
 * `server/discover` is refused as before `initialize` (400, `-32000`, as mcp-version-servers.ts does),
 * `initialize` and `tools/list` are answered, each `tools/call` goes to `onCall`, any other method
 * gets `-32601`.
 */
export async function startRawToolPeer(
  onCall: RawCallHandler,
  tools: readonly Record<string, unknown>[] = LOOKUP_AND_UPDATE,
): Promise<RawServerHandle> {
  return startRawServer((req, res) => {
    if (acceptNotification(req, res)) return;
    const reply = (result: unknown) => sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result });
    if (req.method === 'server/discover')
      return sendJson(res, 400, {
        jsonrpc: '2.0',
        id: req.id,
        error: { code: -32000, message: 'Bad Request' },
      });
    if (req.method === 'initialize') return reply(initializeResult());
    if (req.method === 'tools/list') return reply({ tools });
    if (req.method === 'tools/call') return onCall(req, res, reply);
    sendJson(res, 200, { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'no' } });
  });
}
