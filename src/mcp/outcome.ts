/**
 * A call's outcome from what happened (pure): the tool's result (legacy or modern), a failed
 * session handshake, and the attempts, re-sends and wall time every outcome carries.
 */
import { OutboundError, OutboundErrorCode } from '../http/outbound-error.js';
import { isObject, type JsonObject, type JsonValue } from '../operations/types.js';
import type { Reply } from './transport.js';
import {
  McpClientError,
  McpErrorCode,
  type CallToolOutcome,
  type OutcomeBody,
  type ProtocolProblem,
  type RpcErrorInfo,
} from './types.js';
import {
  describeInputRequests,
  describeServerAsks,
  errorOfBody,
  isLegacyVersion,
  judgeModernError,
  pickVersion,
  resultTypeOf,
} from './versions.js';

/**
 * Whether an HTTP status refusing a request means the server wants a session, or that ours ended
 * (DESIGN.md rule 6: 400 or 404): the caller gets one handshake and sends the request once more.
 */
export function asksForSession(status: number): boolean {
  return status === 400 || status === 404;
}

/** Requests of one call so far: attempts, and re-sends of a refused request. */
export interface Tally {
  attempts: number;
  resends: number;
}

/** Completes an outcome with its attempts, re-sends and wall time (`elapsedMs`, on the caller's clock). */
export function withBase(outcome: OutcomeBody, tally: Tally, elapsedMs: number): CallToolOutcome {
  // Not `{ ...outcome, attempts, … }`: V8 (Node 20) takes microseconds over a spread followed by
  // more properties, on every call; `Object.assign` builds the same object in a fraction of that.
  return Object.assign({}, outcome, {
    attempts: tally.attempts,
    resends: tally.resends,
    durationMs: Math.round(elapsedMs * 100) / 100,
  });
}

/** Whether a modern request's error shows a legacy server (or one that speaks only legacy versions). */
export function answersLegacy(error: unknown): boolean {
  const verdict = judgeModernError(error);
  if (verdict.kind === 'legacy') return true;
  return verdict.kind === 'unsupported_version' && isLegacyVersion(pickVersion(verdict.supported));
}

/** A modern `tools/call` result: `resultType` first (absent means complete). */
export function modernToolResult(result: unknown): OutcomeBody {
  if (isObject(result)) {
    const type = resultTypeOf(result);
    if (type === 'input_required') {
      const needs = describeInputRequests(result);
      return {
        kind: 'input_required',
        needs,
        message: `the tool needs ${needs} before it can finish, which this platform cannot provide`,
      };
    }
    if (type !== 'complete') {
      return {
        kind: 'protocol_error',
        code: 'INVALID_RESULT_TYPE',
        rpcError: null,
        message: `the tools/call result has an unknown resultType ${JSON.stringify(type.invalid)}`,
      };
    }
  }
  return toolResult(result);
}

export function toolResult(result: unknown): OutcomeBody {
  if (!isObject(result) || (result.content !== undefined && !Array.isArray(result.content))) {
    return {
      kind: 'protocol_error',
      code: 'INVALID_RESPONSE',
      rpcError: null,
      message: 'the tools/call result is not an object with a content array',
    };
  }
  return {
    kind: result.isError === true ? 'tool_error' : 'success',
    content: (result.content ?? []) as JsonValue[],
    structuredContent: isObject(result.structuredContent) ? (result.structuredContent as JsonObject) : null,
  };
}

/** Maps a failed session handshake inside a call to an outcome (without the base fields). */
export function handshakeFailure(err: unknown): OutcomeBody {
  if (err instanceof OutboundError) {
    if (err.code === OutboundErrorCode.ABORTED)
      return { kind: 'cancelled', message: 'the call was cancelled' };
    return {
      kind: 'transport_error',
      code: err.code,
      reachedServer: err.reachedServer,
      message: `initialize: ${err.message}`,
    };
  }
  if (err instanceof McpClientError) {
    const d = err.data;
    switch (err.code) {
      case McpErrorCode.AUTH_REQUIRED:
        return {
          kind: 'auth_required',
          wwwAuthenticate: (d.wwwAuthenticate as string | null) ?? null,
          message: err.message,
        };
      case McpErrorCode.UPSTREAM_HTTP_ERROR:
        return {
          kind: 'http_error',
          status: d.status as number,
          bodyExcerpt: d.bodyExcerpt as string,
          wwwAuthenticate: (d.wwwAuthenticate as string | null | undefined) ?? null,
          message: err.message,
        };
      case McpErrorCode.TIMEOUT:
        return { kind: 'timeout', timeoutMs: d.timeoutMs as number, message: err.message };
      case McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
        return {
          kind: 'protocol_error',
          code: 'UNSUPPORTED_PROTOCOL_VERSION',
          rpcError: null,
          message: err.message,
        };
      case McpErrorCode.UPSTREAM_PROTOCOL_ERROR:
        return {
          kind: 'protocol_error',
          code: d.reason as ProtocolProblem,
          rpcError: (d.rpcError as RpcErrorInfo | undefined) ?? null,
          message: err.message,
        };
      case McpErrorCode.UPSTREAM_UNAVAILABLE: {
        const cause = err.cause instanceof OutboundError ? err.cause : null;
        return {
          kind: 'transport_error',
          code: cause?.code ?? OutboundErrorCode.TRANSPORT_ERROR,
          reachedServer: cause?.reachedServer ?? true,
          message: err.message,
        };
      }
    }
  }
  return {
    kind: 'transport_error',
    code: OutboundErrorCode.TRANSPORT_ERROR,
    reachedServer: true,
    message: 'initialize failed unexpectedly',
  };
}

/** `getAuthHeaders` failed: nothing was sent. */
export const AUTH_HEADERS_FAILED: OutcomeBody = {
  kind: 'auth_required',
  wwwAuthenticate: null,
  message: 'credentials for the tool server could not be obtained',
};

/** A request that failed without an answer, as an `OutboundError`. */
export function asOutboundError(err: unknown): OutboundError {
  return err instanceof OutboundError
    ? err
    : new OutboundError(OutboundErrorCode.TRANSPORT_ERROR, 'the call failed unexpectedly', {
        reachedServer: true,
        cause: err,
      });
}

/** The outcome of a request that failed without an answer and is not retried. */
export function failureOutcome(failure: OutboundError, timeoutMs: number): OutcomeBody {
  if (failure.code === OutboundErrorCode.ABORTED)
    return { kind: 'cancelled', message: 'the call was cancelled' };
  if (failure.code === OutboundErrorCode.TIMEOUT) {
    return {
      kind: 'timeout',
      timeoutMs,
      message: `the tool server did not answer within ${timeoutMs} ms`,
    };
  }
  return {
    kind: 'transport_error',
    code: failure.code,
    reachedServer: failure.reachedServer,
    message: failure.message,
  };
}

/**
 * Whether an answer refuses the request before the server acted on it: `legacy` when a modern
 * request meets a refusal no modern server gives (the server is legacy, or was replaced by one),
 * `session` for a 400 or 404 (the server wants a session, or ours ended). Null otherwise.
 */
export function refusalOf(reply: Reply, modern: boolean): 'legacy' | 'session' | null {
  if (
    modern &&
    ((reply.type === 'http' &&
      reply.status !== 401 &&
      reply.status >= 400 &&
      reply.status < 500 &&
      answersLegacy(errorOfBody(reply.bodyExcerpt))) ||
      (reply.type === 'rpc_error' && answersLegacy(reply.error)))
  )
    return 'legacy';
  if (reply.type === 'http' && asksForSession(reply.status)) return 'session';
  return null;
}

/** The outcome of an answer that is not sent again. */
export function replyOutcome(reply: Reply, modern: boolean): OutcomeBody {
  switch (reply.type) {
    case 'result': {
      const body = modern ? modernToolResult(reply.result) : toolResult(reply.result);
      if (!reply.asked || (body.kind !== 'success' && body.kind !== 'tool_error')) return body;
      // The tool asked for input this platform cannot give (declined or refused), then answered.
      const needs = describeServerAsks(reply.asked);
      return {
        kind: 'input_required',
        needs,
        message: `the tool asked for ${needs} during the call, which this platform cannot provide`,
        said: textOfContent(body.content),
      };
    }
    case 'rpc_error':
      return {
        kind: 'protocol_error',
        code: 'JSONRPC_ERROR',
        rpcError: reply.error,
        message: `the tool server returned JSON-RPC error ${reply.error.code}`,
      };
    case 'protocol':
      return { kind: 'protocol_error', code: reply.problem, rpcError: null, message: reply.detail };
    case 'http':
      if (reply.status === 401) {
        return {
          kind: 'auth_required',
          wwwAuthenticate: reply.wwwAuthenticate,
          message: 'the tool server requires authorization (HTTP 401)',
        };
      }
      return {
        kind: 'http_error',
        status: reply.status,
        bodyExcerpt: reply.bodyExcerpt,
        wwwAuthenticate: reply.wwwAuthenticate,
        message: `the tool server answered HTTP ${reply.status}`,
      };
  }
}

/** The text items of a result's content, joined. */
function textOfContent(content: JsonValue[]): string {
  return content
    .map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : ''))
    .filter((t) => t !== '')
    .join(' ');
}
