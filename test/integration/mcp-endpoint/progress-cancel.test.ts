/**
 * Progress through the MCP endpoint (issue 27): a client's `tools/call` with a progressToken gets,
 * on an event stream, each `notifications/progress` the tool server sends (with the client's own
 * token, monotonic, the connection's secret scrubbed) before its result. The SDK 1.32 `Client`
 * (a client nobody here wrote) with `onprogress`, against a real SDK tool server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';
import { endpointUrl, mintMcpClientToken, recordedCalls } from '../../support/mcp-endpoint.js';
import {
  startSdkServer,
  type PeerExtra,
  type PeerTool,
  type SdkServerHandle,
} from '../../support/mcp-servers.js';
import { buildWorld, connectTools, type World } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

const KEY = 'sk-progress-secret-7f3a9c';

async function progress(extra: PeerExtra, value: number, total: number, message: string) {
  const token = extra._meta?.progressToken;
  if (token === undefined) return; // the platform asks for progress only when it records it
  await extra.sendNotification({
    method: 'notifications/progress',
    params: { progressToken: token, progress: value, total, message },
  });
}

/** The upstream calls of `wait` and `slow_write`, and whether the tool server saw each aborted. */
const upstream = { waits: 0, waitAborted: 0, writes: 0, writesDone: 0, release: () => {} };
let released = new Promise<void>((resolve) => (upstream.release = resolve));

const TOOLS: PeerTool[] = [
  {
    name: 'wait',
    description: 'Waits until its request is aborted',
    annotations: { readOnlyHint: true },
    handler: async (_args, extra) => {
      upstream.waits++;
      await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve()));
      upstream.waitAborted++;
      return { content: [{ type: 'text', text: 'aborted' }] };
    },
  },
  {
    name: 'slow_write',
    description: 'Writes once the test lets it',
    annotations: { readOnlyHint: false, destructiveHint: true },
    handler: async () => {
      upstream.writes++;
      await released;
      upstream.writesDone++;
      return { content: [{ type: 'text', text: 'written' }] };
    },
  },
  {
    name: 'steps',
    description: 'Does three steps, telling how far it is',
    annotations: { readOnlyHint: true },
    handler: async (_args, extra) => {
      await progress(extra, 1, 3, 'step 1 of 3');
      await progress(extra, 2, 3, `step 2 of 3 with ${KEY}`);
      await progress(extra, 2, 3, 'step 2 again: not monotonic, not passed on');
      await progress(extra, 3, 3, 'step 3 of 3');
      return { content: [{ type: 'text', text: 'all 3 steps done' }] };
    },
  },
];

let t: TestApp;
let peer: SdkServerHandle;
let w: World;
let token: string;

beforeAll(async () => {
  t = await startTestApp({ env: { PROGRESS_INTERVAL_MS: '0' } });
  peer = await startSdkServer({ stateful: false, json: false, tools: TOOLS });
  w = await buildWorld(t, peer.url, 'Jobs', undefined, { kind: 'BEARER', key: KEY });
  await connectTools(t, w);
  token = await mintMcpClientToken(t, w, 'progress client');
});
afterAll(async () => {
  await t.stop();
  await peer.close();
});

async function connect(): Promise<Client> {
  const client = new Client({ name: 'sdk1-progress', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(endpointUrl(t, w.assistantId), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe('progress through the MCP endpoint', () => {
  it("passes the tool server's progress on, monotonic and scrubbed, before the result", async () => {
    const client = await connect();
    try {
      const { tools } = await client.listTools();
      const name = tools.map((x) => x.name).find((n) => n.endsWith('__steps'));
      expect(name).toBeDefined();
      const seen: Progress[] = [];
      const result = await client.callTool({ name: name!, arguments: {} }, undefined, {
        onprogress: (p) => seen.push(p),
      });
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: 'text', text: 'all 3 steps done' }]);
      expect(seen.map((p) => p.progress)).toEqual([1, 2, 3]);
      expect(seen.every((p) => p.total === 3)).toBe(true);
      expect(seen[0]!.message).toBe('step 1 of 3');
      expect(seen[1]!.message).toContain('step 2 of 3');
      expect(JSON.stringify(seen)).not.toContain(KEY);
      const [recorded] = await recordedCalls(t, w.assistantId, name!, {});
      expect(recorded!.status).toBe('SUCCEEDED');
    } finally {
      await client.close();
    }
  });

  it('answers raw POSTs as the transport spec says: JSON without a progressToken, 202, 406, 415, errors', async () => {
    const url = endpointUrl(t, w.assistantId);
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          ...headers,
        },
        body,
      });
    const {
      result: { tools },
    } = (await (await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).json()) as {
      result: { tools: { name: string }[] };
    };
    const name = tools.map((x) => x.name).find((n) => n.endsWith('__steps'))!;
    const call = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name } }),
    );
    expect(call.headers.get('content-type')).toBe('application/json');
    expect(await call.json()).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { content: [{ type: 'text', text: 'all 3 steps done' }] },
    });
    const note = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(note.status).toBe(202);
    expect(await note.text()).toBe('');
    expect((await post('{}', { accept: 'application/json' })).status).toBe(406);
    expect((await post('{}', { 'content-type': 'text/plain' })).status).toBe(415);
    const parse = await post('{"jsonrpc":');
    expect(parse.status).toBe(400);
    expect(await parse.json()).toMatchObject({ error: { code: -32700 } });
    const invalid = await post(JSON.stringify({ jsonrpc: '2.0', id: 3 }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ error: { code: -32600 } });
    const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'resources/list' }));
    expect(await unknown.json()).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32601, message: 'Method not found' },
    });
    const sse = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }), {
      accept: 'text/event-stream, application/json',
    });
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    expect(await sse.text()).toBe('event: message\ndata: {"jsonrpc":"2.0","id":5,"result":{}}\n\n');
  });
});

describe('cancellation through the MCP endpoint', () => {
  it('stops waiting for a READ: the upstream request is aborted, the client gets no result, the TurnCall is recorded', async () => {
    const client = await connect();
    try {
      const { tools } = await client.listTools();
      const name = tools.map((x) => x.name).find((n) => n.endsWith('__wait'))!;
      const abort = new AbortController();
      const pending = client.callTool({ name, arguments: { n: 1 } }, undefined, { signal: abort.signal });
      await waitUntil(() => upstream.waits === 1);
      abort.abort('the user stopped it');
      await expect(pending).rejects.toThrow();
      // The SDK client sent notifications/cancelled; the endpoint aborted its request upstream.
      await waitUntil(() => upstream.waitAborted === 1);
      const [recorded] = await recordedCalls(t, w.assistantId, name, { n: 1 });
      expect(recorded!.status).toBe('UPSTREAM_ERROR');
    } finally {
      await client.close();
    }
  });

  it("cannot cancel another client's call: a cancel with the same request id from another session does nothing", async () => {
    const a = await connect();
    const b = await connect();
    try {
      const { tools } = await a.listTools();
      const name = tools.map((x) => x.name).find((n) => n.endsWith('__wait'))!;
      const abort = new AbortController();
      const before = upstream.waitAborted;
      const pending = a.callTool({ name, arguments: { n: 2 } }, undefined, { signal: abort.signal });
      await waitUntil(() => upstream.waits === 2);
      // b names every small request id a's call could have.
      for (let id = 0; id < 10; id++)
        await b.notification({ method: 'notifications/cancelled', params: { requestId: id } });
      await b.ping();
      expect(upstream.waitAborted).toBe(before);
      abort.abort();
      await expect(pending).rejects.toThrow();
      await waitUntil(() => upstream.waitAborted === before + 1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('does not abandon a WRITE already sent: it runs to its end, recorded, with its ledger row', async () => {
    const client = await connect();
    try {
      const { tools } = await client.listTools();
      const name = tools.map((x) => x.name).find((n) => n.endsWith('__slow_write'))!;
      const abort = new AbortController();
      const pending = client.callTool({ name, arguments: { n: 3 } }, undefined, { signal: abort.signal });
      await waitUntil(() => upstream.writes === 1);
      abort.abort();
      await expect(pending).rejects.toThrow();
      upstream.release();
      await waitUntil(() => upstream.writesDone === 1);
      const [recorded] = await recordedCalls(t, w.assistantId, name, { n: 3 });
      expect(recorded!.status).toBe('SUCCEEDED');
      expect(recorded!.ledgerStatus).not.toBeNull();
    } finally {
      released = Promise.resolve();
      await client.close();
    }
  });
});
