/**
 * Resuming an answer stream (2025-11-25 transports, "Resumability and Redelivery"; the conformance
 * suite's `sse-retry`): a server that ends the POST's event stream before the answer, having given
 * an event id, gets a GET with `Last-Event-ID` after its `retry:` wait, within the call's deadline.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import {} from '../../../src/http/outbound.js';
import { DEFAULT_SSE_RETRY_MS, MAX_SSE_RESUMPTIONS, MAX_SSE_RETRY_MS } from '../../../src/mcp/client.js';
import {
  acceptNotification,
  initializeResult,
  sendJson,
  startRawServer,
  type RawRequest,
  type RawServerHandle,
} from '../../support/mcp-servers.js';
import { waitUntil } from '../../support/wait.js';
import { cleanupAfterEach } from '../../support/cleanups.js';
import { mcpClient, mcpEndpoint } from '../../support/mcp-client.js';

const cleanups = cleanupAfterEach();

const client = () => mcpClient(cleanups);

const endpoint = (url: string, timeoutMs = 3_000) => mcpEndpoint(url, { timeoutMs }, 'resume');

const READ = { risk: 'READ', idempotent: false } as const;

function openStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

const answer = (id: unknown, text: string) =>
  `event: message\nid: answer\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } })}\n\n`;

/**
 * A peer whose `tools/call` stream sends `prime` (an SSE block) and ends; `onGet` handles the
 * resuming GETs, with the pending call's id.
 */
async function peer(
  prime: string,
  onGet: (req: RawRequest, res: ServerResponse, pendingId: unknown, getCount: number) => void,
): Promise<RawServerHandle & { closedAt: () => number; getsAt: number[] }> {
  let pendingId: unknown = null;
  let closedAt = 0;
  const getsAt: number[] = [];
  const s = await startRawServer((req, res) => {
    if (req.httpMethod === 'GET') {
      getsAt.push(performance.now());
      onGet(req, res, pendingId, getsAt.length);
      return;
    }
    if (req.httpMethod === 'DELETE') {
      res.writeHead(405);
      res.end();
      return;
    }
    if (acceptNotification(req, res)) return;
    if (req.method === 'initialize') {
      sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult('2025-11-25') });
      return;
    }
    if (req.method === 'tools/call') {
      pendingId = req.id;
      openStream(res);
      res.write(prime);
      setTimeout(() => {
        closedAt = performance.now();
        res.end();
      }, 20);
      return;
    }
    sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools: [] } });
  });
  cleanups.push(() => s.close());
  return Object.assign(s, { closedAt: () => closedAt, getsAt });
}

const gets = (s: RawServerHandle) => s.requests.filter((r) => r.httpMethod === 'GET');

describe('a server that closes the answer stream gracefully before the answer', () => {
  it("should GET with Last-Event-ID after the server's retry wait and take the answer from there", async () => {
    // Longer than the default wait: a client that ignored `retry:` would GET before it.
    const retryMs = DEFAULT_SSE_RETRY_MS + 200;
    const s = await peer(`id: prime-7\nretry: ${retryMs}\ndata: \n\n`, (_req, res, pendingId) => {
      openStream(res);
      res.end(answer(pendingId, 'resumed'));
    });
    const outcome = await client().callTool(endpoint(s.url, 10_000), 'slow', {}, READ);
    expect(outcome).toMatchObject({ kind: 'success', attempts: 1, resends: 0 });
    expect(outcome.kind === 'success' && outcome.content).toEqual([{ type: 'text', text: 'resumed' }]);
    const [get] = gets(s);
    expect(gets(s)).toHaveLength(1);
    expect(get!.headers['last-event-id']).toBe('prime-7');
    expect(get!.headers.accept).toBe('text/event-stream');
    expect(get!.headers['mcp-protocol-version']).toBe('2025-06-18');
    // The wait honours retry: (a timer never fires early, so this bound holds however slow the machine).
    expect(s.getsAt[0]! - s.closedAt()).toBeGreaterThanOrEqual(retryMs - 20);
    // Still one tools/call: resuming is not a second attempt.
    expect(s.count('tools/call')).toBe(1);
  });

  it('should keep the session on the resuming GET', async () => {
    const s = await startRawServer((req, res) => {
      if (req.httpMethod === 'GET') {
        openStream(res);
        res.end(
          answer(s.requests.find((r) => r.method === 'tools/call' && r.headers['mcp-session-id'])?.id, 'ok'),
        );
        return;
      }
      if (acceptNotification(req, res)) return;
      if (req.httpMethod === 'DELETE') {
        res.writeHead(405);
        res.end();
        return;
      }
      if (req.method === 'initialize') {
        sendJson(
          res,
          200,
          { jsonrpc: '2.0', id: req.id, result: initializeResult('2025-11-25') },
          {
            'mcp-session-id': 'sess-1',
          },
        );
        return;
      }
      if (req.headers['mcp-session-id'] !== 'sess-1') {
        sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'No session' } });
        return;
      }
      openStream(res);
      res.end('id: p1\nretry: 50\ndata: \n\n');
    });
    cleanups.push(() => s.close());
    const outcome = await client().callTool(endpoint(s.url), 'tool', {}, READ);
    expect(outcome).toMatchObject({ kind: 'success', resends: 1 });
    expect(gets(s)[0]!.headers['mcp-session-id']).toBe('sess-1');
    expect(gets(s)[0]!.headers['mcp-protocol-version']).toBe('2025-11-25');
  });

  it('should not resume a stream that gave no event id: NO_RESPONSE, no GET', async () => {
    const s = await peer('retry: 50\ndata: \n\n', () => {
      throw new Error('no GET expected');
    });
    const outcome = await client().callTool(endpoint(s.url), 'slow', {}, READ);
    expect(outcome).toMatchObject({ kind: 'protocol_error', code: 'NO_RESPONSE' });
    expect(gets(s)).toHaveLength(0);
  });

  it('should end with NO_RESPONSE naming the status when the GET is refused (405)', async () => {
    const s = await peer('id: 1\nretry: 50\ndata: \n\n', (_req, res) => {
      res.writeHead(405);
      res.end();
    });
    const outcome = await client().callTool(endpoint(s.url), 'slow', {}, READ);
    expect(outcome).toMatchObject({ kind: 'protocol_error', code: 'NO_RESPONSE' });
    expect(outcome.kind === 'protocol_error' && outcome.message).toMatch(/GET was answered HTTP 405/);
    expect(gets(s)).toHaveLength(1);
  });

  it(`should resume at most ${MAX_SSE_RESUMPTIONS} times from a server that keeps closing`, async () => {
    const s = await peer('id: 1\nretry: 20\ndata: \n\n', (_req, res, _id, n) => {
      openStream(res);
      res.end(`id: again-${n}\nretry: 20\ndata: \n\n`);
    });
    const outcome = await client().callTool(endpoint(s.url), 'slow', {}, READ);
    expect(outcome).toMatchObject({ kind: 'protocol_error', code: 'NO_RESPONSE' });
    expect(gets(s).map((g) => g.headers['last-event-id'])).toEqual(['1', 'again-1', 'again-2']);
  });

  it("should not wait past the call's deadline: a retry longer than the time left is a timeout, without a GET", async () => {
    // As long as the test's own timeout: a client that slept it before seeing the deadline would
    // run the test out of time (its GET, with no time left, would not even reach the server).
    const s = await peer(`id: 1\nretry: ${MAX_SSE_RETRY_MS}\ndata: \n\n`, () => {
      throw new Error('no GET expected');
    });
    const outcome = await client().callTool(
      endpoint(s.url, 1_000),
      'slow',
      {},
      { risk: 'WRITE', idempotent: false },
    );
    expect(outcome).toMatchObject({ kind: 'timeout', attempts: 1 });
    expect(gets(s)).toHaveLength(0);
  });

  it('should end as cancelled when the caller aborts during the wait', async () => {
    // The longest wait the client honours, as long as the test's own timeout: a wait that did not
    // end on the abort would run the test out of time.
    const s = await peer(`id: 1\nretry: ${MAX_SSE_RETRY_MS}\ndata: \n\n`, () => {
      throw new Error('no GET expected');
    });
    const abort = new AbortController();
    // Aborts after the server has ended the stream, while the client waits to resume it.
    void waitUntil(() => s.closedAt() > 0).then(() => setTimeout(() => abort.abort(), 100));
    const outcome = await client().callTool(
      endpoint(s.url, 2 * MAX_SSE_RETRY_MS),
      'slow',
      {},
      { ...READ, signal: abort.signal },
    );
    expect(outcome).toMatchObject({ kind: 'cancelled' });
    expect(gets(s)).toHaveLength(0);
  });
});
