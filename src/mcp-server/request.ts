/**
 * The HTTP side of an MCP endpoint request (endpoint.ts serves it): the assistant named by the path,
 * a header's value, whether the client wants SSE, and the JSON-RPC errors answered before any
 * body is read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fromGlobalId } from '../graphql/node.js';
import { refuseEarly } from '../http/edge.js';
import type { RpcMessage } from './rpc.js';

/** A JSON-RPC error answered before the SDK sees the request. */
export function rpcError(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  code: number,
  message: string,
): void {
  refuseEarly(req, res, status, JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The assistant's id from `/mcp/{assistantId}` (its GraphQL ID), or null. */
export function assistantOf(pathname: string, prefix: string): { globalId: string; id: string } | null {
  const globalId = decodeURIComponent(pathname.slice(prefix.length));
  if (globalId.length === 0 || globalId.length > 200 || globalId.includes('/')) return null;
  const parsed = fromGlobalId(globalId);
  return parsed?.type === 'Assistant' ? { globalId, id: parsed.id } : null;
}

/** JSON unless the client prefers SSE: text/event-stream listed first, or a progressToken to stream. */
export function wantsSse(accept: string | undefined, messages: readonly RpcMessage[]): boolean {
  return (
    sseFirst(accept) || messages.some((m) => m.kind === 'request' && hasProgressToken(m.request.params._meta))
  );
}

function sseFirst(accept: string | undefined): boolean {
  return (accept ?? '').split(',')[0]?.trim().split(';')[0]?.trim() === 'text/event-stream';
}

function hasProgressToken(meta: unknown): boolean {
  return (
    meta !== null &&
    typeof meta === 'object' &&
    (meta as { progressToken?: unknown }).progressToken !== undefined
  );
}

/** A 2026-07-28 request (one message, no sessions) wants SSE as a legacy one does. */
export function modernWantsSse(accept: string | undefined, parsed: unknown): boolean {
  const params = (parsed as { params?: { _meta?: unknown } } | null)?.params;
  return sseFirst(accept) || hasProgressToken(params?._meta);
}

/** 401 with where to find the protected-resource metadata (RFC 9728), from the headers alone. */
export function refuseUnauthenticated(req: IncomingMessage, res: ServerResponse, metadata: string): void {
  const given = req.headers.authorization !== undefined;
  refuseEarly(
    req,
    res,
    401,
    JSON.stringify({
      jsonrpc: '2.0',
      error: {
        code: -32001,
        message: given
          ? 'the token is not valid (revoked, expired, unknown or malformed)'
          : 'a token is required: Authorization: Bearer <MCP_CLIENT token>',
      },
      id: null,
    }),
    {
      'www-authenticate': `Bearer resource_metadata="${metadata}"${given ? ', error="invalid_token"' : ''}`,
    },
  );
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
