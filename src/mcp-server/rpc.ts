/**
 * The legacy revisions' JSON-RPC (2025-03-26, 2025-06-18, 2025-11-25), written by hand (issue 27):
 * what the SDK 1.32 `Server` + `StreamableHTTPServerTransport` did per request, without building
 * them per request (see docs/mcp-clients.md, "How it is served", for what they cost).
 *
 * Pure apart from the handlers it is given: it checks the Accept and Content-Type headers as the
 * SDK transport does, reads a parsed body into messages (a 2025-03-26 batch, bounded), answers each
 * request, and says whether the answer is JSON, SSE or a bare 202. endpoint.ts does the HTTP.
 */
import type { JsonObject } from '../operations/types.js';
import { negotiatedVersion, type McpCallResult, type McpTool } from './protocol.js';

/** JSON-RPC and MCP error codes used here. */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** The transport's own refusals (406, 415), as the SDK answers them. */
  TRANSPORT: -32000,
} as const;

export type RpcId = string | number;

export interface RpcError {
  code: number;
  message: string;
}

/** A handler's refusal: becomes the request's JSON-RPC error. */
export class RpcFault extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export type RpcResponse =
  { jsonrpc: '2.0'; id: RpcId; result: unknown } | { jsonrpc: '2.0'; id: RpcId | null; error: RpcError };

export interface RpcRequest {
  id: RpcId;
  method: string;
  params: Record<string, unknown>;
}

export interface RpcNotification {
  method: string;
  params: Record<string, unknown>;
}

/** One message of the body, read. Responses from the client are accepted and ignored. */
export type RpcMessage =
  | { kind: 'request'; request: RpcRequest }
  | { kind: 'notification'; notification: RpcNotification }
  | { kind: 'response' };

export interface ToolsCallParams {
  name: string;
  arguments: JsonObject;
  meta: Record<string, unknown> | undefined;
  progressToken: string | number | undefined;
}

/** What the dispatcher needs from the endpoint. */
export interface RpcHandlers {
  listTools(cursor: string | undefined): Promise<{ tools: McpTool[]; nextCursor?: string }>;
  callTool(params: ToolsCallParams, id: RpcId): Promise<McpCallResult>;
  /** A notification (`notifications/initialized`, `notifications/cancelled`, …). */
  notify?(notification: RpcNotification): void;
}

export interface ServerDescription {
  serverInfo: { name: string; version: string };
  instructions?: string;
}

/**
 * The POST's Accept and Content-Type, as the SDK transport checks them: the client MUST accept both
 * `application/json` and `text/event-stream` (406), and send `application/json` (415).
 */
export function postHeadersProblem(
  accept: string | undefined,
  contentType: string | undefined,
): { status: 406 | 415; message: string } | null {
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream'))
    return {
      status: 406,
      message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
    };
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json')
    return { status: 415, message: 'Unsupported Media Type: Content-Type must be application/json' };
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isId(v: unknown): v is RpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/** One JSON-RPC 2.0 message, or null when it is none (an Invalid Request). */
export function readMessage(m: unknown): RpcMessage | null {
  if (!isObject(m) || m.jsonrpc !== '2.0') return null;
  if (m.params !== undefined && !isObject(m.params)) return null;
  if (typeof m.method === 'string') {
    const params = m.params ?? {};
    if (m.id === undefined) return { kind: 'notification', notification: { method: m.method, params } };
    if (!isId(m.id)) return null;
    return { kind: 'request', request: { id: m.id, method: m.method, params } };
  }
  if (m.method === undefined && isId(m.id) && ('result' in m || isObject(m.error)))
    return { kind: 'response' };
  return null;
}

/** The body read into messages, or the refusal the whole POST gets (HTTP 400). */
export function readBatch(
  parsed: unknown,
  batchesAllowed: boolean,
  batchMax: number,
  version: string,
): { ok: true; messages: RpcMessage[]; batch: boolean } | { ok: false; code: number; message: string } {
  const batch = Array.isArray(parsed);
  const raw: unknown[] = batch ? parsed : [parsed];
  if (batch) {
    if (!batchesAllowed)
      return {
        ok: false,
        code: RPC.INVALID_REQUEST,
        message: `batches are not part of protocol version ${version}`,
      };
    if (raw.length === 0 || raw.length > batchMax)
      return { ok: false, code: RPC.INVALID_REQUEST, message: `a batch holds 1 to ${batchMax} messages` };
  }
  const messages: RpcMessage[] = [];
  for (const m of raw) {
    const read = readMessage(m);
    if (!read)
      return { ok: false, code: RPC.INVALID_REQUEST, message: 'Invalid Request: not a JSON-RPC 2.0 message' };
    messages.push(read);
  }
  if (batch && messages.some((m) => m.kind === 'request' && m.request.method === 'initialize'))
    return {
      ok: false,
      code: RPC.INVALID_REQUEST,
      message: 'Invalid Request: initialize must be sent alone, not in a batch',
    };
  return { ok: true, messages, batch };
}

const PROGRESS_TOKEN = 'progressToken';

/** `tools/call`'s params, or the -32602 message. */
export function toolsCallParams(params: Record<string, unknown>): ToolsCallParams | string {
  if (typeof params.name !== 'string' || params.name.length === 0) return 'tools/call needs a string name';
  if (params.arguments !== undefined && !isObject(params.arguments))
    return 'tools/call arguments must be an object';
  if (params._meta !== undefined && !isObject(params._meta)) return '_meta must be an object';
  const meta = params._meta;
  const token = meta?.[PROGRESS_TOKEN];
  if (token !== undefined && !isId(token)) return '_meta.progressToken must be a string or a number';
  return {
    name: params.name,
    arguments: (params.arguments ?? {}) as JsonObject,
    meta,
    progressToken: token,
  };
}

/** `initialize`'s params checked as the SDK's schema does, or the -32602 message. */
function initializeProblem(params: Record<string, unknown>): string | null {
  if (typeof params.protocolVersion !== 'string') return 'initialize needs a protocolVersion string';
  if (!isObject(params.capabilities)) return 'initialize needs a capabilities object';
  const info = params.clientInfo;
  if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string')
    return 'initialize needs clientInfo with a name and a version';
  return null;
}

/** One request's answer. Never throws: a handler's failure is a JSON-RPC error. */
export async function answer(
  request: RpcRequest,
  handlers: RpcHandlers,
  server: ServerDescription,
): Promise<RpcResponse> {
  const { id, params } = request;
  const fail = (code: number, message: string): RpcResponse => ({
    jsonrpc: '2.0',
    id,
    error: { code, message },
  });
  try {
    switch (request.method) {
      case 'initialize': {
        const problem = initializeProblem(params);
        if (problem) return fail(RPC.INVALID_PARAMS, problem);
        const result: Record<string, unknown> = {
          protocolVersion: negotiatedVersion(params.protocolVersion),
          capabilities: { tools: { listChanged: true } },
          serverInfo: server.serverInfo,
        };
        if (server.instructions !== undefined) result.instructions = server.instructions;
        return { jsonrpc: '2.0', id, result };
      }
      case 'ping':
        return { jsonrpc: '2.0', id, result: {} };
      case 'tools/list': {
        const cursor = params.cursor;
        if (cursor !== undefined && typeof cursor !== 'string')
          return fail(RPC.INVALID_PARAMS, 'cursor must be a string');
        return { jsonrpc: '2.0', id, result: await handlers.listTools(cursor) };
      }
      case 'tools/call': {
        const call = toolsCallParams(params);
        if (typeof call === 'string') return fail(RPC.INVALID_PARAMS, call);
        return { jsonrpc: '2.0', id, result: await handlers.callTool(call, id) };
      }
      default:
        return fail(RPC.METHOD_NOT_FOUND, 'Method not found');
    }
  } catch (err) {
    if (err instanceof RpcFault) return fail(err.code, err.message);
    // Never the error's own text: it may hold what the client must not see.
    return fail(RPC.INTERNAL_ERROR, 'Internal error');
  }
}

/** One SSE event of a JSON-RPC message, as the transport spec writes them. */
export function sseEvent(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * The client's `notifications/progress` for one line of the tool server's progress, or null when
 * it would not be monotonic (the spec: "The progress value MUST increase with each notification")
 * or is not progress. `last` is the value last passed on (null: none yet).
 */
export function progressNotification(
  progressToken: RpcId,
  line: { progress: number | null; total: number | null; message: string | null },
  last: number | null,
): { jsonrpc: '2.0'; method: 'notifications/progress'; params: Record<string, unknown> } | null {
  if (line.progress === null || (last !== null && line.progress <= last)) return null;
  const params: Record<string, unknown> = { progressToken, progress: line.progress };
  if (line.total !== null) params.total = line.total;
  if (line.message !== null) params.message = line.message;
  return { jsonrpc: '2.0', method: 'notifications/progress', params };
}
