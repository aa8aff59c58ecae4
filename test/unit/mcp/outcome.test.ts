import { describe, expect, it } from 'vitest';
import { OutboundError, OutboundErrorCode } from '../../../src/http/outbound.js';
import { failureOutcome, refusalOf, replyOutcome } from '../../../src/mcp/outcome.js';
import type { Reply } from '../../../src/mcp/transport.js';

const http = (status: number, body = ''): Reply => ({
  type: 'http',
  status,
  bodyExcerpt: body,
  wwwAuthenticate: null,
});
const rpc = (code: number, data?: unknown): Reply => ({
  type: 'rpc_error',
  error: { code, message: 'no', ...(data === undefined ? {} : { data: data as never }) },
});
const modernError = (code: number, data?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message: 'no', data } });

describe('refusalOf', () => {
  it.each<[string, Reply, boolean, 'legacy' | 'session' | null]>([
    ['a 400 to a legacy request', http(400), false, 'session'],
    ['a 404 to a legacy request', http(404), false, 'session'],
    ['a 403 to a legacy request', http(403), false, null],
    ['a 401 to a legacy request', http(401), false, null],
    ['a 500 to a legacy request', http(500), false, null],
    ['a JSON-RPC error to a legacy request', rpc(-32601), false, null],
    ['a 400 without a modern error to a modern request', http(400, 'bad request'), true, 'legacy'],
    ['a 404 without a modern error to a modern request', http(404), true, 'legacy'],
    ['a 405 to a modern request', http(405), true, 'legacy'],
    ['a 401 to a modern request', http(401), true, null],
    ['a 500 to a modern request', http(500), true, null],
    ['a method-not-found JSON-RPC error to a modern request', rpc(-32601), true, 'legacy'],
    // A modern server's own refusals are answers, not a sign of a legacy server.
    ['a modern header mismatch in a 400', http(400, modernError(-32020)), true, 'session'],
    ['a modern header mismatch as a JSON-RPC error', rpc(-32020), true, null],
  ])('%s is %s', (_name, reply, modern, expected) => {
    expect(refusalOf(reply, modern)).toBe(expected);
  });
});

describe('replyOutcome', () => {
  it('should map a result, a JSON-RPC error, a protocol problem, a 401 and another status', () => {
    const response = {} as never;
    expect(replyOutcome({ type: 'result', result: { content: [], isError: true }, response }, false)).toEqual(
      {
        kind: 'tool_error',
        content: [],
        structuredContent: null,
      },
    );
    expect(replyOutcome(rpc(-32000), false)).toMatchObject({ kind: 'protocol_error', code: 'JSONRPC_ERROR' });
    expect(replyOutcome({ type: 'protocol', problem: 'NO_RESPONSE', detail: 'gone' }, false)).toEqual({
      kind: 'protocol_error',
      code: 'NO_RESPONSE',
      rpcError: null,
      message: 'gone',
    });
    expect(replyOutcome(http(401), true)).toMatchObject({ kind: 'auth_required' });
    expect(replyOutcome(http(503, 'busy'), true)).toMatchObject({
      kind: 'http_error',
      status: 503,
      bodyExcerpt: 'busy',
    });
  });
});

describe('failureOutcome', () => {
  const failure = (code: OutboundErrorCode, reachedServer = true) =>
    new OutboundError(code, 'it failed', { reachedServer });
  it.each<[OutboundErrorCode, string]>([
    [OutboundErrorCode.ABORTED, 'cancelled'],
    [OutboundErrorCode.TIMEOUT, 'timeout'],
    [OutboundErrorCode.TRANSPORT_ERROR, 'transport_error'],
    [OutboundErrorCode.CONNECT_FAILED, 'transport_error'],
    [OutboundErrorCode.BODY_TOO_LARGE, 'transport_error'],
  ])('%s is %s', (code, kind) => {
    expect(failureOutcome(failure(code), 1_000).kind).toBe(kind);
  });
});
