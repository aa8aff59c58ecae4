/**
 * `npm run bench -- mcp-endpoint`: an assistant's tools served as an MCP server (issue 27).
 * `tools/call` through `POST /mcp/{assistantId}` (an MCP_CLIENT token, one session, JSON answers)
 * against `callTool` through GraphQL (a RUNTIME token, one turn) and a bare undici POST of the same
 * `tools/call` to the tool server, all three in the same run, interleaved in batches so that load
 * from elsewhere on the machine hits each alike.
 *
 * As in `npm run bench -- turns`: the service runs as `npm start` runs it (production mode, its own
 * process, info logging to a discarded stdout), the tool server is the raw `node:http` peer
 * (bench/raw-peer.ts) in a child process, and everything is warmed up with thousands of calls
 * before anything is measured. The service's CPU per call is read from /proc.
 *
 * Goals: added p50 at c=1 within 0.3 ms of callTool's; calls/s at c=32 within 10 % of callTool's.
 *
 * First, what the SDK's server classes (`@modelcontextprotocol/sdk` 1.32 `McpServer` +
 * `StreamableHTTPServerTransport`, which the endpoint uses for the legacy revisions) cost by
 * themselves: the same bare `tools/call` POST to the raw peer, to an SDK server built per request
 * (stateless) and to one SDK server per session (stateful), each in its own process, p50 at c=1,
 * calls/s at c=32 and the server process's CPU per call.
 * `BENCH_SERVICE=tsx` runs the service through tsx; `BENCH_CPU_PROF=<dir>` writes its CPU profile.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Pool } from 'undici';
import { Role } from '../src/auth/api-token.entity.js';
import {
  benchDatabase,
  fmt,
  graphqlClient,
  load,
  percentile,
  processCpuMs,
  root,
  startBenchApp,
  startPeerProcess,
  startRawPeerProcess,
  startServiceProcess,
} from './support.js';

const RAW_TOOLS = 30;
/** Calls of each kind before anything is measured, at c=32 (and a tenth of that at c=1). */
const WARM_CALLS = 4000;
const BATCHES = 10;
const BATCH_CALLS = { 1: 40, 32: 480 } as const;
const LEGACY_VERSION = '2025-06-18';

interface Goal {
  what: string;
  value: string;
  baseline: string;
  met: boolean;
}

/** The JSON-RPC message of a JSON or SSE answer (the last `data:` line that parses, for SSE). */
export function answerOf(
  contentType: string | undefined,
  text: string,
): { result?: unknown; error?: unknown } {
  if (contentType?.startsWith('text/event-stream')) {
    let last: { result?: unknown; error?: unknown } | undefined;
    for (const line of text.split('\n'))
      if (line.startsWith('data:') && line.length > 5) {
        const m = JSON.parse(line.slice(5)) as { id?: unknown; result?: unknown; error?: unknown };
        if (m.id !== undefined) last = m;
      }
    if (!last) throw new Error(`no answer on the stream: ${text.slice(0, 200)}`);
    return last;
  }
  return JSON.parse(text) as { result?: unknown; error?: unknown };
}

/** A keep-alive MCP client of the endpoint: initialize once, then `call()` is one `tools/call`. */
async function endpointClient(
  base: string,
  assistantId: string,
  token: string,
  tool: string,
): Promise<{ call: () => Promise<void>; close: () => Promise<void>; sessionId: string | undefined }> {
  const origin = new URL(base).origin;
  const path = `/mcp/${encodeURIComponent(assistantId)}`;
  const pool = new Pool(origin, { connections: 64 });
  let id = 1;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
  };
  const post = async (body: unknown) => {
    const res = await pool.request({ path, method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.body.text();
    return { res, text };
  };
  const init = await post({
    jsonrpc: '2.0',
    id: id++,
    method: 'initialize',
    params: {
      protocolVersion: LEGACY_VERSION,
      capabilities: {},
      clientInfo: { name: 'bench', version: '1' },
    },
  });
  if (init.res.statusCode !== 200) throw new Error(`initialize: ${init.res.statusCode} ${init.text}`);
  const sessionId = init.res.headers['mcp-session-id'] as string | undefined;
  if (sessionId) headers['mcp-session-id'] = sessionId;
  headers['mcp-protocol-version'] = LEGACY_VERSION;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const call = async () => {
    const { res, text } = await post({
      jsonrpc: '2.0',
      id: id++,
      method: 'tools/call',
      params: { name: tool, arguments: { q: 'x' } },
    });
    const answer = answerOf(res.headers['content-type'] as string | undefined, text);
    const result = answer.result as { isError?: boolean } | undefined;
    if (res.statusCode !== 200 || !result || result.isError)
      throw new Error(`tools/call: ${res.statusCode} ${text.slice(0, 300)}`);
  };
  return { call, close: () => pool.close(), sessionId };
}

/** A keep-alive bare POST of one `tools/call` to an MCP server (after `initialize` when it keeps sessions). */
async function barePoster(
  serverUrl: string,
  tool: string,
): Promise<{ call: () => Promise<void>; close: () => Promise<void> }> {
  const url = new URL(serverUrl);
  const pool = new Pool(url.origin, { connections: 64 });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = await pool.request({
    path: url.pathname,
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LEGACY_VERSION,
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    }),
  });
  await init.body.text();
  const session = init.headers['mcp-session-id'];
  if (typeof session === 'string') headers['mcp-session-id'] = session;
  headers['mcp-protocol-version'] = LEGACY_VERSION;
  let id = 1;
  const call = async () => {
    const res = await pool.request({
      path: url.pathname,
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: { name: tool, arguments: { q: 'x' } },
      }),
    });
    const body = (await res.body.json()) as { result?: unknown };
    if (body.result === undefined) throw new Error(`bare call to ${serverUrl} failed`);
  };
  return { call, close: () => pool.close() };
}

/** The SDK server classes' own cost per `tools/call`, beside the raw peer's (see the header). */
async function sdkServerCost(): Promise<void> {
  const peers = [
    ['raw node:http', await startRawPeerProcess(3)],
    ['SDK, stateless (a server per request)', await startPeerProcess(3)],
    ['SDK, stateful (a server per session)', await startPeerProcess(3, { stateful: true })],
  ] as const;
  try {
    const posters = await Promise.all(peers.map(([, p]) => barePoster(p.url, 'tool_1')));
    for (const poster of posters) {
      await load(poster.call, WARM_CALLS, 32);
      await load(poster.call, WARM_CALLS / 10, 1);
    }
    for (const concurrency of [1, 32] as const) {
      const calls = BATCH_CALLS[concurrency];
      const lat = peers.map(() => [] as number[]);
      const wall = peers.map(() => 0);
      const cpu = peers.map(() => 0);
      for (let b = 0; b < BATCHES; b++)
        for (let k = 0; k < peers.length; k++) {
          const i = (b + k) % peers.length;
          const cpu0 = processCpuMs(peers[i]![1].pid);
          const r = await load(posters[i]!.call, calls, concurrency);
          cpu[i]! += processCpuMs(peers[i]![1].pid) - cpu0;
          lat[i]!.push(...r.latencies);
          wall[i]! += r.wallMs;
        }
      const n = calls * BATCHES;
      console.log(
        `tool server alone, c=${concurrency}: ` +
          peers
            .map(
              ([name], i) =>
                `${name} p50 ${fmt(percentile(lat[i]!, 50))} ms, ${fmt((n / wall[i]!) * 1000, 0)} calls/s, server CPU ${fmt(cpu[i]! / n, 3)} ms/call`,
            )
            .join('; '),
      );
    }
    for (const poster of posters) await poster.close();
  } finally {
    for (const [, p] of peers) await p.stop();
  }
}

export async function run(): Promise<void> {
  const compiled = process.env.BENCH_SERVICE !== 'tsx';
  if (compiled) {
    console.log('building the service (npm run build) so that it runs as npm start runs it…');
    execFileSync(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      { cwd: root, stdio: 'inherit' },
    );
  }
  await sdkServerCost();
  const goals: Goal[] = [];
  const db = await benchDatabase();
  const rawPeer = await startRawPeerProcess(RAW_TOOLS);
  const A = await startBenchApp(db.url);
  const profileDir = process.env.BENCH_CPU_PROF;
  const S = await startServiceProcess(db.url, {
    compiled,
    nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    // One token drives c=32: above its default cap of calls in flight per token (16).
    env: { MCP_CALLS_PER_TOKEN: '64' },
  });
  const s = graphqlClient(S.url);
  const closers: (() => Promise<void>)[] = [];
  try {
    const admin = await A.token(Role.ADMIN);
    const runtime = await A.token(Role.RUNTIME);
    const ws = await A.gql<{ createWorkspace: { workspace: { id: string } } }>(
      'mutation($n: String!) { createWorkspace(input: { name: $n }) { workspace { id } } }',
      { n: 'Bench' },
      admin,
    );
    const workspaceId = ws.createWorkspace.workspace.id;
    const asst = await A.gql<{ createAssistant: { assistant: { id: string } } }>(
      'mutation($w: ID!, $n: String!) { createAssistant(input: { workspaceId: $w, name: $n }) { assistant { id } } }',
      { w: workspaceId, n: 'Raw' },
      admin,
    );
    const assistantId = asst.createAssistant.assistant.id;
    const conn = await A.gql<{ createConnection: { connection: { id: string } } }>(
      'mutation($w: ID!, $n: String!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: $n, endpointUrl: $u }) { connection { id } } }',
      { w: workspaceId, n: 'Raw', u: rawPeer.url },
      admin,
    );
    await A.gql(
      'mutation($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { changed } }',
      { a: assistantId, c: conn.createConnection.connection.id },
      admin,
    );
    const minted = await A.gql<{
      createApiToken: { secret: string | null; userErrors: { message: string }[] };
    }>(
      'mutation($a: ID!) { createApiToken(input: { label: "bench mcp client", role: MCP_CLIENT, assistantId: $a }) { secret userErrors { message } } }',
      { a: assistantId },
      admin,
    );
    const mcpToken = minted.createApiToken.secret;
    if (!mcpToken) throw new Error(`createApiToken: ${JSON.stringify(minted.createApiToken.userErrors)}`);

    const tool = 'raw__tool_1';
    // callTool through GraphQL, in one turn.
    const turn = await s.gql<{ beginTurn: { turnId: string } }>(
      'mutation($a: ID!) { beginTurn(input: { assistantId: $a, conversationId: "bench" }) { turnId } }',
      { a: assistantId },
      runtime,
    );
    const callTool = async () => {
      const r = await s.gql<{ callTool: { ok: boolean; recorded: boolean } }>(
        'mutation($t: ID!, $n: String!) { callTool(input: { turnId: $t, name: $n, arguments: { q: "x" } }) { ok status recorded } }',
        { t: turn.beginTurn.turnId, n: tool },
        runtime,
      );
      if (!r.callTool.ok || !r.callTool.recorded) throw new Error(`callTool: ${JSON.stringify(r.callTool)}`);
    };
    // tools/call through the endpoint, in one session.
    const endpoint = await endpointClient(S.url, assistantId, mcpToken, tool);
    closers.push(endpoint.close);
    console.log(
      `endpoint session: ${endpoint.sessionId ? 'the server gave a session id' : 'no session id (stateless)'}`,
    );
    // A bare POST of the same tools/call to the tool server.
    const peerUrl = new URL(rawPeer.url);
    const peerPool = new Pool(peerUrl.origin, { connections: 64 });
    closers.push(() => peerPool.close());
    let bareId = 1;
    const bare = async () => {
      const res = await peerPool.request({
        path: peerUrl.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': LEGACY_VERSION,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: bareId++,
          method: 'tools/call',
          params: { name: 'tool_1', arguments: { q: 'x' } },
        }),
      });
      const body = (await res.body.json()) as { result?: unknown };
      if (body.result === undefined) throw new Error('bare call failed');
    };

    const kinds = [
      ['endpoint', endpoint.call],
      ['callTool', callTool],
      ['bare', bare],
    ] as const;
    // Warm-up: V8 optimises the call path only after a few thousand calls (bench/turns.bench.ts).
    for (const [, fn] of kinds) {
      await load(fn, WARM_CALLS, 32);
      await load(fn, WARM_CALLS / 10, 1);
    }

    for (const concurrency of [1, 32] as const) {
      const calls = BATCH_CALLS[concurrency];
      const latencies = { endpoint: [] as number[], callTool: [] as number[], bare: [] as number[] };
      const wall = { endpoint: 0, callTool: 0, bare: 0 };
      const cpu = { endpoint: 0, callTool: 0, bare: 0 };
      for (let b = 0; b < BATCHES; b++) {
        // Each batch starts with a different kind, so no kind always follows the same one.
        for (let k = 0; k < kinds.length; k++) {
          const [name, fn] = kinds[(b + k) % kinds.length]!;
          const cpu0 = processCpuMs(S.pid);
          const r = await load(fn, calls, concurrency);
          cpu[name] += processCpuMs(S.pid) - cpu0;
          latencies[name].push(...r.latencies);
          wall[name] += r.wallMs;
        }
      }
      const n = calls * BATCHES;
      const p50 = (k: keyof typeof latencies) => percentile(latencies[k], 50);
      const p95 = (k: keyof typeof latencies) => percentile(latencies[k], 95);
      const rate = (k: keyof typeof wall) => (n / wall[k]) * 1000;
      const addedEndpoint = p50('endpoint') - p50('bare');
      const addedCallTool = p50('callTool') - p50('bare');
      console.log(
        `c=${concurrency}: p50 / p95 endpoint ${fmt(p50('endpoint'))} / ${fmt(p95('endpoint'))} ms, ` +
          `callTool ${fmt(p50('callTool'))} / ${fmt(p95('callTool'))} ms, bare POST ${fmt(p50('bare'))} / ${fmt(p95('bare'))} ms; ` +
          `added over the bare POST: endpoint ${fmt(addedEndpoint)} ms, callTool ${fmt(addedCallTool)} ms; ` +
          `calls/s endpoint ${fmt(rate('endpoint'), 0)}, callTool ${fmt(rate('callTool'), 0)}, bare ${fmt(rate('bare'), 0)}; ` +
          `service CPU per call: endpoint ${fmt(cpu.endpoint / n, 3)} ms, callTool ${fmt(cpu.callTool / n, 3)} ms`,
      );
      if (concurrency === 1)
        goals.push({
          what: "tools/call c=1: added p50 within 0.3 ms of callTool's",
          value: `added ${fmt(addedEndpoint)} ms (${fmt(addedEndpoint - addedCallTool)} ms more than callTool)`,
          baseline: `callTool added ${fmt(addedCallTool)} ms; bare POST p50 ${fmt(p50('bare'))} ms`,
          met: addedEndpoint - addedCallTool <= 0.3,
        });
      else
        goals.push({
          what: "tools/call c=32: calls/s within 10 % of callTool's",
          value: `${fmt(rate('endpoint'), 0)} calls/s (${fmt((rate('endpoint') / rate('callTool')) * 100, 1)} % of callTool)`,
          baseline: `callTool ${fmt(rate('callTool'), 0)} calls/s; bare POST ${fmt(rate('bare'), 0)} calls/s`,
          met: rate('endpoint') >= 0.9 * rate('callTool'),
        });
    }

    console.log(`\ngoals (issue 27; service ${compiled ? 'compiled' : 'through tsx'}):`);
    for (const g of goals)
      console.log(`  ${g.met ? 'MET   ' : 'MISSED'} ${g.what}: ${g.value} (same run: ${g.baseline})`);
  } finally {
    for (const close of closers) await close();
    await s.close();
    await S.stop();
    await A.stop();
    await rawPeer.stop();
    await db.cleanup();
  }
}
