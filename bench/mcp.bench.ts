/**
 * `npm run bench -- mcp`: `McpClient.callTool` against a local SDK server (stateless, JSON
 * answers), beside a bare undici POST of the same JSON-RPC body and beside the SDK's own
 * `Client` + `StreamableHTTPClientTransport`. Sequential and 32-way concurrent.
 *
 * The server runs in a child process so that its CPU does not blur the client's. Variants are
 * interleaved in small batches and the medians over batches are reported: wall time per call, and
 * this process's CPU time per call (the client's own cost, event-loop wake-ups included). Goal: callTool within 1.2x of the bare
 * POST, and ahead of the SDK client.
 *
 * Then the turn path's dispatch against the raw peer (`bench/raw-peer.ts`, `node:http`, no SDK) at
 * c=1: a bare undici `Pool.request` POST of the same body, `McpClient.callTool`, and `dispatch()`
 * with a cached operation of a key connection (the argument check, the key, the scrub, the result),
 * interleaved; p50 and this process's CPU per call (issue 15).
 *
 * Then a hostile listing: a server whose `tools/list` cursor never ends. Discovery stops at its
 * 100-page limit; its time is printed beside 100 bare `tools/list` POSTs to the same server, in the
 * same run (the bound the test `hostile-servers` › "cursor that never ends" used to hold).
 */
import { EventEmitter } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import { Agent, Pool, type Dispatcher } from 'undici';
import { ConnectionKind, CredentialKind } from '../src/connections/connection.entity.js';
import { credentialAad } from '../src/connections/endpoint.js';
import { SecretBox } from '../src/connections/secrets.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from '../src/config.js';
import { OutboundClient } from '../src/http/outbound.js';
import { createLogger } from '../src/logger.js';
import { McpClient, type McpEndpoint } from '../src/mcp/client.js';
import type { TurnDeps } from '../src/turns/deps.js';
import { dispatch } from '../src/turns/dispatch.js';
import type { CachedOperation } from '../src/turns/tool-cache.js';
import {
  acceptNotification,
  initializeResult,
  sendJson,
  startRawServer,
} from '../test/support/mcp-servers.js';
import { percentile, startPeerProcess, startRawPeerProcess } from './support.js';

const CONCURRENCY = 32;
const WARMUP_CALLS = 320;
/** Variants take turns in small batches, so load from elsewhere on the machine hits all alike. */
const BATCHES = 40;
const SEQUENTIAL_BATCH = 15; // calls
const CONCURRENT_BATCH = 64; // calls: 2 per worker

interface Sample {
  wallUs: number;
  cpuUs: number;
}

type Call = () => Promise<void>;

async function measure(call: Call, calls: number, concurrency: number): Promise<Sample> {
  const perWorker = Math.ceil(calls / concurrency);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = 0; i < perWorker; i++) await call();
    }),
  );
  const wallUs = ((performance.now() - started) * 1000) / (perWorker * concurrency);
  const used = process.cpuUsage(cpu);
  return { wallUs, cpuUs: (used.user + used.system) / (perWorker * concurrency) };
}

/** Median wall time and median CPU time, each over the batches. */
function median(samples: Sample[]): Sample {
  const mid = (values: number[]): number =>
    values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  return { wallUs: mid(samples.map((s) => s.wallUs)), cpuUs: mid(samples.map((s) => s.cpuUs)) };
}

function row(label: string, s: Sample, base: Sample): string {
  const ratio = (s.wallUs / base.wallUs).toFixed(2);
  const cpuRatio = (s.cpuUs / base.cpuUs).toFixed(2);
  return `  ${label.padEnd(26)} ${s.wallUs.toFixed(0).padStart(6)} µs/call ${(1e6 / s.wallUs).toFixed(0).padStart(7)} calls/s   client CPU ${s.cpuUs.toFixed(0).padStart(4)} µs/call   ${ratio}x wall, ${cpuRatio}x CPU vs bare`;
}

const BARE_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-06-18',
};

/** A bare `tools/call` of `tool_0` through `dispatcher` (an Agent or a Pool): the JSON parsed, nothing else. */
function bareToolsCall(dispatcher: Dispatcher, target: URL, args: Record<string, unknown>): Call {
  let id = 1;
  return async () => {
    const res = await dispatcher.request({
      origin: target.origin,
      path: target.pathname,
      method: 'POST',
      headers: BARE_HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: { name: 'tool_0', arguments: args },
      }),
    });
    const body = (await res.body.json()) as { result?: unknown };
    if (res.statusCode !== 200 || body.result === undefined) throw new Error('bare call failed');
  };
}

export async function run(): Promise<void> {
  const peer = await startPeerProcess(1);
  const url = peer.url;
  const target = new URL(url);
  const args = { text: 'hello' };

  // Bare undici: the same headers and body, the JSON parsed, nothing else.
  const agent = new Agent();
  const bare = bareToolsCall(agent, target, args);

  const outbound = new OutboundClient({ allowLoopback: true });
  const mcp = new McpClient(outbound);
  const ep: McpEndpoint = { id: 'bench', url, auth: { kind: 'none' } };
  const ours: Call = async () => {
    const outcome = await mcp.callTool(ep, 'tool_0', args, { risk: 'READ', idempotent: false });
    if (outcome.kind !== 'success') throw new Error(`callTool failed: ${outcome.kind}`);
  };

  // The SDK transport passes one AbortSignal to every fetch, and Node's fetch lets go of its
  // listeners only at GC: under load that trips the max-listeners warning. Not ours to fix here.
  EventEmitter.defaultMaxListeners = 0;
  const sdk = new Client({ name: 'bench', version: '0.0.0' });
  await sdk.connect(new StreamableHTTPClientTransport(target));
  const official: Call = async () => {
    const result = await sdk.callTool({ name: 'tool_0', arguments: args });
    if (result.isError === true) throw new Error('SDK call failed');
  };

  const variants: [string, Call][] = [
    ['bare undici POST', bare],
    ['McpClient.callTool', ours],
    ['SDK Client.callTool', official],
  ];
  try {
    for (const [, call] of variants) await measure(call, WARMUP_CALLS, CONCURRENCY);
    for (const [mode, calls, concurrency] of [
      ['sequential', SEQUENTIAL_BATCH, 1],
      [`${CONCURRENCY}-way concurrent`, CONCURRENT_BATCH, CONCURRENCY],
    ] as const) {
      const samples = new Map<string, Sample[]>(variants.map(([label]) => [label, []]));
      for (let batch = 0; batch < BATCHES; batch++) {
        // Rotate the order every batch so drift (GC, CPU boost) does not favour one variant.
        for (let k = 0; k < variants.length; k++) {
          const [label, call] = variants[(k + batch) % variants.length] as [string, Call];
          samples.get(label)?.push(await measure(call, calls, concurrency));
        }
      }
      const med = new Map([...samples].map(([label, s]) => [label, median(s)]));
      const base = med.get('bare undici POST') as Sample;
      const oursS = med.get('McpClient.callTool') as Sample;
      const sdkS = med.get('SDK Client.callTool') as Sample;
      console.log(
        `\n${mode}: ${BATCHES} batches of ${calls} calls per variant, medians over batches` +
          ' (stateless JSON SDK server in a child process)',
      );
      for (const [label] of variants) console.log(row(label, med.get(label) as Sample, base));
      console.log(
        `  => callTool / bare POST: ${(oursS.wallUs / base.wallUs).toFixed(2)}x wall (goal <= 1.20x);` +
          ` callTool / SDK client: ${(oursS.wallUs / sdkS.wallUs).toFixed(2)}x wall, ${(oursS.cpuUs / sdkS.cpuUs).toFixed(2)}x CPU (goal < 1)`,
      );
    }
    await rawPeerDispatch();
    await endlessCursor(agent, mcp);
  } finally {
    await sdk.close();
    await agent.close();
    await outbound.close();
    await peer.stop();
  }
}

const DISPATCH_BATCHES = 40;
const DISPATCH_BATCH = 50; // calls
const DISPATCH_WARMUP = 2_000; // calls per variant

/**
 * c=1 against the raw peer: a bare `Pool.request`, `McpClient.callTool` and `dispatch()`, taking
 * turns in batches; p50 over every call, and the median over batches of this process's CPU.
 */
async function rawPeerDispatch(): Promise<void> {
  const peer = await startRawPeerProcess(1);
  const target = new URL(peer.url);
  const args = { q: 'hello' };
  const pool = new Pool(target.origin);
  const bare = bareToolsCall(pool, target, args);

  const outbound = new OutboundClient({ allowLoopback: true });
  const mcp = new McpClient(outbound);
  const ep: McpEndpoint = { id: 'raw-bench', url: peer.url, auth: { kind: 'none' } };
  const callTool: Call = async () => {
    const outcome = await mcp.callTool(ep, 'tool_0', args, { risk: 'READ', idempotent: false });
    if (outcome.kind !== 'success') throw new Error(`callTool failed: ${outcome.kind}`);
  };

  // A key connection's call touches the configuration, the logger, the MCP client and the secret
  // box, all real here; the database, OAuth and metrics only for OAuth connections and the records.
  const secrets = new SecretBox(randomBytes(32));
  const services = {
    config: { toolResultMaxChars: DEFAULT_TOOL_RESULT_MAX_CHARS },
    logger: createLogger('silent'),
    mcp,
    outbound,
    secrets,
  } as unknown as TurnDeps;
  const connectionId = '00000000-0000-4000-8000-00000000be9c';
  const op: CachedOperation = {
    id: 'raw-bench-op',
    key: 'bench__tool_0',
    name: 'tool_0',
    description: 'Tool number 0',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    checkSchema: null,
    risk: 'READ',
    idempotent: false,
    binding: null,
    connection: {
      id: connectionId,
      slug: 'bench',
      kind: ConnectionKind.MCP,
      status: 'READY',
      endpointUrl: peer.url,
      baseUrl: null,
      timeoutMs: null,
      credentialKind: CredentialKind.BEARER,
      credentialHeaderName: null,
      credentialSecret: secrets.seal(
        `sk_bench_${randomBytes(24).toString('hex')}`,
        credentialAad(connectionId),
      ),
      credentialOrigins: [target.origin],
      protocolVersion: '2025-06-18',
    },
  };
  const turnCall: Call = async () => {
    const result = await dispatch(services, op, 'bench__tool_0', args, () => undefined);
    if (!result.ok) throw new Error(`dispatch failed: ${result.message}`);
  };

  const variants: [string, Call][] = [
    ['bare Pool.request POST', bare],
    ['McpClient.callTool', callTool],
    ['dispatch() (key connection)', turnCall],
  ];
  const latencies = new Map<string, number[]>(variants.map(([label]) => [label, []]));
  const cpu = new Map<string, number[]>(variants.map(([label]) => [label, []]));
  try {
    for (const [, call] of variants) for (let i = 0; i < DISPATCH_WARMUP; i++) await call();
    for (let batch = 0; batch < DISPATCH_BATCHES; batch++) {
      for (let k = 0; k < variants.length; k++) {
        const [label, call] = variants[(k + batch) % variants.length] as [string, Call];
        const used = process.cpuUsage();
        for (let i = 0; i < DISPATCH_BATCH; i++) {
          const started = performance.now();
          await call();
          latencies.get(label)?.push((performance.now() - started) * 1000);
        }
        const spent = process.cpuUsage(used);
        cpu.get(label)?.push((spent.user + spent.system) / DISPATCH_BATCH);
      }
    }
  } finally {
    await outbound.close();
    await pool.close();
    await peer.stop();
  }
  const p50 = (label: string): number => percentile(latencies.get(label) ?? [], 50);
  const cpuOf = (label: string): number => percentile(cpu.get(label) ?? [], 50);
  const base = variants[0]![0];
  console.log(
    `\nraw peer, c=1: ${DISPATCH_BATCHES} batches of ${DISPATCH_BATCH} calls per variant, interleaved` +
      ' (raw node:http peer in a child process; CPU: this process, median over batches)',
  );
  for (const [label] of variants) {
    console.log(
      `  ${label.padEnd(28)} p50 ${p50(label).toFixed(0).padStart(5)} µs (+${(p50(label) - p50(base)).toFixed(0).padStart(4)} µs over bare)` +
        `   CPU ${cpuOf(label).toFixed(0).padStart(4)} µs/call (+${(cpuOf(label) - cpuOf(base)).toFixed(0).padStart(4)} µs)`,
    );
  }
}

const CURSOR_RUNS = 10;
const PAGE_LIMIT = 100;

/** Discovery against a cursor that never ends, beside 100 bare `tools/list` POSTs; medians, interleaved. */
async function endlessCursor(agent: Agent, mcp: McpClient): Promise<void> {
  let page = 0;
  const server = await startRawServer((req, res) => {
    if (acceptNotification(req, res)) return;
    if (req.method === 'initialize')
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult() });
    page++;
    const tools = [{ name: `t${page}`, inputSchema: { type: 'object' } }];
    sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: { tools, nextCursor: `c${page}` } });
  });
  const target = new URL(server.url);
  const bareList = async (): Promise<void> => {
    for (let i = 0; i < PAGE_LIMIT; i++) {
      const res = await agent.request({
        origin: target.origin,
        path: target.pathname,
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list', params: { cursor: `c${i}` } }),
      });
      await res.body.json();
    }
  };
  const discover = async (): Promise<void> => {
    const result = await mcp.discover({ id: `cursor-${page}`, url: server.url, auth: { kind: 'none' } });
    if (result.stopReason !== 'PAGE_LIMIT' || result.pages !== PAGE_LIMIT)
      throw new Error(`discovery stopped by ${result.stopReason} after ${result.pages} pages`);
  };
  const ms = async (work: () => Promise<void>): Promise<number> => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  try {
    await discover();
    await bareList();
    const bare: number[] = [];
    const ours: number[] = [];
    for (let run = 0; run < CURSOR_RUNS; run++) {
      if (run % 2 === 0) {
        ours.push(await ms(discover));
        bare.push(await ms(bareList));
      } else {
        bare.push(await ms(bareList));
        ours.push(await ms(discover));
      }
    }
    const mid = (values: number[]): number =>
      values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
    console.log(
      `\nendless tools/list cursor: discovery stopped at ${PAGE_LIMIT} pages in ${mid(ours).toFixed(0)} ms; ` +
        `${PAGE_LIMIT} bare tools/list POSTs ${mid(bare).toFixed(0)} ms; ${(mid(ours) / mid(bare)).toFixed(2)}x ` +
        `(medians of ${CURSOR_RUNS}, interleaved, server in this process)`,
    );
  } finally {
    await server.close();
  }
}
