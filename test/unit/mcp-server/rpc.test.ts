import { describe, expect, it } from 'vitest';
import {
  answer,
  postHeadersProblem,
  progressNotification,
  readBatch,
  readMessage,
  RPC,
  RpcFault,
  sseEvent,
  toolsCallParams,
  type RpcHandlers,
  type ToolsCallParams,
} from '../../../src/mcp-server/rpc.js';

const SERVER = { serverInfo: { name: 'connected-tools', version: '1.0.0' } };

function handlers(over: Partial<RpcHandlers> = {}): RpcHandlers & { calls: ToolsCallParams[] } {
  const calls: ToolsCallParams[] = [];
  return {
    calls,
    listTools: async (cursor) => ({
      tools: [{ name: 'crm__lookup', description: 'd', inputSchema: { type: 'object' } }],
      ...(cursor === undefined ? { nextCursor: 'next' } : {}),
    }),
    callTool: async (params) => {
      calls.push(params);
      return { content: [{ type: 'text', text: `called ${params.name}` }] };
    },
    ...over,
  };
}

const req = (method: string, params: Record<string, unknown> = {}, id: string | number = 1) => ({
  id,
  method,
  params,
});

describe('the POST headers, as the SDK transport checks them', () => {
  it('needs both media types in Accept (406) and a JSON body (415)', () => {
    expect(postHeadersProblem('application/json', 'application/json')?.status).toBe(406);
    expect(postHeadersProblem('text/event-stream', 'application/json')?.status).toBe(406);
    expect(postHeadersProblem(undefined, 'application/json')?.status).toBe(406);
    expect(postHeadersProblem('application/json, text/event-stream', 'text/plain')?.status).toBe(415);
    expect(postHeadersProblem('application/json, text/event-stream', undefined)?.status).toBe(415);
    expect(postHeadersProblem('application/json, text/event-stream', 'application/jsonx')?.status).toBe(415);
    expect(
      postHeadersProblem('text/event-stream, application/json', 'Application/JSON; charset=utf-8'),
    ).toBeNull();
  });
});

describe('reading messages', () => {
  it('tells requests, notifications and responses apart, and refuses what is none', () => {
    expect(readMessage({ jsonrpc: '2.0', id: 3, method: 'ping' })).toEqual({
      kind: 'request',
      request: { id: 3, method: 'ping', params: {} },
    });
    expect(readMessage({ jsonrpc: '2.0', method: 'notifications/initialized' })?.kind).toBe('notification');
    expect(readMessage({ jsonrpc: '2.0', id: 'a', result: {} })?.kind).toBe('response');
    expect(readMessage({ jsonrpc: '2.0', id: 'a', error: { code: 1, message: 'x' } })?.kind).toBe('response');
    for (const bad of [
      null,
      'x',
      [],
      { id: 1, method: 'ping' },
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: {}, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: [1] },
      { jsonrpc: '2.0', id: 1, method: 5 },
      { jsonrpc: '2.0', id: 1 },
    ])
      expect(readMessage(bad)).toBeNull();
  });

  it('takes batches only where allowed, bounded, without initialize', () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect(readBatch([ping], false, 4, '2025-06-18')).toMatchObject({
      ok: false,
      code: RPC.INVALID_REQUEST,
      message: 'batches are not part of protocol version 2025-06-18',
    });
    expect(readBatch([], true, 4, '2025-03-26')).toMatchObject({ ok: false, code: RPC.INVALID_REQUEST });
    expect(readBatch(Array(5).fill(ping), true, 4, '2025-03-26')).toMatchObject({ ok: false });
    expect(readBatch(Array(4).fill(ping), true, 4, '2025-03-26')).toMatchObject({ ok: true, batch: true });
    expect(
      readBatch([ping, { jsonrpc: '2.0', id: 2, method: 'initialize', params: {} }], true, 4, '2025-03-26'),
    ).toMatchObject({ ok: false, code: RPC.INVALID_REQUEST });
    expect(readBatch([ping, { nope: 1 }], true, 4, '2025-03-26')).toMatchObject({
      ok: false,
      code: RPC.INVALID_REQUEST,
    });
    expect(readBatch(ping, false, 4, '2025-06-18')).toMatchObject({ ok: true, batch: false });
  });
});

describe('answering', () => {
  it('initialize negotiates the version and states tools.listChanged', async () => {
    const init = (protocolVersion: unknown) =>
      answer(
        req('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'c', version: '1' } }),
        handlers(),
        SERVER,
      );
    expect(await init('2025-03-26')).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: '2025-03-26',
        capabilities: { tools: { listChanged: true } },
        serverInfo: SERVER.serverInfo,
      },
    });
    expect(
      ((await init('1999-01-01')) as { result: { protocolVersion: string } }).result.protocolVersion,
    ).toBe('2025-11-25');
    const bad = await answer(req('initialize', { protocolVersion: '2025-06-18' }), handlers(), SERVER);
    expect(bad).toMatchObject({ id: 1, error: { code: RPC.INVALID_PARAMS } });
    const withInstructions = await answer(
      req('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'c', version: '1' },
      }),
      handlers(),
      { ...SERVER, instructions: 'use crm__lookup' },
    );
    expect(withInstructions).toMatchObject({ result: { instructions: 'use crm__lookup' } });
  });

  it('answers ping, lists tools, and refuses an unknown method and bad params', async () => {
    const h = handlers();
    expect(await answer(req('ping', {}, 'p'), h, SERVER)).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
    expect(await answer(req('tools/list'), h, SERVER)).toMatchObject({ result: { nextCursor: 'next' } });
    expect(await answer(req('tools/list', { cursor: 7 }), h, SERVER)).toMatchObject({
      error: { code: RPC.INVALID_PARAMS },
    });
    expect(await answer(req('resources/list'), h, SERVER)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: RPC.METHOD_NOT_FOUND, message: 'Method not found' },
    });
    for (const params of [
      {},
      { name: '' },
      { name: 'x', arguments: [] },
      { name: 'x', _meta: 1 },
      { name: 'x', _meta: { progressToken: {} } },
    ])
      expect(await answer(req('tools/call', params), h, SERVER)).toMatchObject({
        error: { code: RPC.INVALID_PARAMS },
      });
    expect(h.calls).toEqual([]);
  });

  it('calls the tool with its arguments, meta and progress token', async () => {
    const h = handlers();
    const out = await answer(
      req('tools/call', {
        name: 'crm__lookup',
        arguments: { q: 'a\u0000b' },
        _meta: { progressToken: 'pt' },
      }),
      h,
      SERVER,
    );
    expect(out).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'called crm__lookup' }] },
    });
    expect(h.calls).toEqual([
      {
        name: 'crm__lookup',
        arguments: { q: 'a\u0000b' },
        meta: { progressToken: 'pt' },
        progressToken: 'pt',
      },
    ]);
    expect(toolsCallParams({ name: 'x' })).toEqual({
      name: 'x',
      arguments: {},
      meta: undefined,
      progressToken: undefined,
    });
  });

  it("turns a handler's fault into its error, and anything else into an Internal error without its text", async () => {
    const faulty = handlers({
      listTools: async () => {
        throw new RpcFault(RPC.INVALID_PARAMS, 'Invalid cursor');
      },
      callTool: async () => {
        throw new Error('password=hunter2');
      },
    });
    expect(await answer(req('tools/list'), faulty, SERVER)).toMatchObject({
      error: { code: RPC.INVALID_PARAMS, message: 'Invalid cursor' },
    });
    const internal = await answer(req('tools/call', { name: 'x' }), faulty, SERVER);
    expect(internal).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: RPC.INTERNAL_ERROR, message: 'Internal error' },
    });
  });

  it('writes one SSE event per message', () => {
    expect(sseEvent({ jsonrpc: '2.0', id: 1, result: {} })).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
    );
  });
});

describe('progress passed on', () => {
  it("carries the client's token, only increasing values, and drops what is not progress", () => {
    const line = (progress: number | null, total: number | null = null, message: string | null = null) => ({
      progress,
      total,
      message,
    });
    expect(progressNotification('pt', line(1, 3, 'one'), null)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 'pt', progress: 1, total: 3, message: 'one' },
    });
    expect(progressNotification(7, line(0.5), null)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 7, progress: 0.5 },
    });
    expect(progressNotification('pt', line(2), 2)).toBeNull();
    expect(progressNotification('pt', line(1), 2)).toBeNull();
    expect(progressNotification('pt', line(null), null)).toBeNull();
  });
});
