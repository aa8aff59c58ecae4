/**
 * How discovery and the session handshake report a failed request: an answer that is not a result
 * becomes an `McpClientError` (`replyError`), a request without an answer the matching code or the
 * refusal as it is (`transportError`). No I/O.
 */
import { AppError } from '../errors.js';
import { OutboundError, OutboundErrorCode } from '../http/outbound.js';
import { AuthHeadersFailed, type Reply } from './transport.js';
import { McpClientError, McpErrorCode } from './types.js';

export function replyError(reply: Exclude<Reply, { type: 'result' }>, what: string): McpClientError {
  switch (reply.type) {
    case 'http':
      if (reply.status === 401) {
        return new McpClientError(
          McpErrorCode.AUTH_REQUIRED,
          `${what}: the server requires authorization (HTTP 401)`,
          {
            wwwAuthenticate: reply.wwwAuthenticate,
          },
        );
      }
      return new McpClientError(
        McpErrorCode.UPSTREAM_HTTP_ERROR,
        reply.status === 404 || reply.status === 405
          ? `${what}: the server answered HTTP ${reply.status}, so there is no MCP endpoint at this address; check the path of endpointUrl (MCP servers usually answer at …/mcp)`
          : `${what}: the server answered HTTP ${reply.status}`,
        {
          status: reply.status,
          bodyExcerpt: reply.bodyExcerpt,
          wwwAuthenticate: reply.wwwAuthenticate,
        },
      );
    case 'rpc_error':
      return new McpClientError(
        McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
        `${what}: the server returned JSON-RPC error ${reply.error.code}`,
        { reason: 'JSONRPC_ERROR', rpcError: reply.error },
      );
    case 'protocol':
      return new McpClientError(McpErrorCode.UPSTREAM_PROTOCOL_ERROR, `${what}: ${reply.detail}`, {
        reason: reply.problem,
      });
  }
}

/** Translates a transport failure for discovery: refusals stay as they are. */
export function transportError(err: unknown, what: string): AppError {
  if (err instanceof AuthHeadersFailed) {
    return new McpClientError(
      McpErrorCode.AUTH_REQUIRED,
      `${what}: credentials could not be obtained`,
      { wwwAuthenticate: null },
      err.cause,
    );
  }
  if (err instanceof OutboundError) {
    if (err.code === OutboundErrorCode.TIMEOUT) {
      return new McpClientError(
        McpErrorCode.TIMEOUT,
        `${what}: ${err.message}`,
        { timeoutMs: err.data.timeoutMs ?? null },
        err,
      );
    }
    if (
      err.code === OutboundErrorCode.CONNECT_FAILED ||
      err.code === OutboundErrorCode.TRANSPORT_ERROR ||
      err.code === OutboundErrorCode.ABORTED
    ) {
      return new McpClientError(
        McpErrorCode.UPSTREAM_UNAVAILABLE,
        `${what}: ${err.message}`,
        { reachedServer: err.reachedServer },
        err,
      );
    }
    return err;
  }
  if (err instanceof AppError) return err;
  return new McpClientError(McpErrorCode.UPSTREAM_UNAVAILABLE, `${what}: unexpected failure`, {}, err);
}
