/**
 * `npm run bench -- turns`: the turn path, every goal of issue 15 printed with its same-run
 * baseline and MET/MISSED.
 *
 * The service runs as `npm start` runs it (production mode, its own process, info logging to a
 * discarded stdout) so that its CPU can be read from /proc apart from this process (the load
 * generator); PostgreSQL's is read the same way from the backends serving the bench database.
 * Two MCP peers, each in a child process:
 * - a raw `node:http` JSON-RPC responder (bench/raw-peer.ts): callTool through the API against a
 *   bare undici POST of the same `tools/call` to it, interleaved in batches so that load from
 *   elsewhere on the machine hits both alike; c=1 added p50 latency, c=32 recorded calls/s, and
 *   the service's and PostgreSQL's CPU ms per call;
 * - the SDK server with 300 tools: beginTurn's cost, and callTool beside a bare POST as before
 *   (the SDK peer caps the throughput, so it says little about ours).
 * Also: disable propagation from one instance to another (goal < 1 s); and the dialects of issue
 * 26: a cold compile of 300 corpus tools per dialect (in this process, with the build's compiler
 * when the service runs compiled; goal < 50 ms) and beginTurn with those 300 tools in each dialect
 * once warm, beside GENERIC (goal: p50 within 0.5 ms).
 *
 * `BENCH_TURNS_ONLY=dialects` runs the dialect lines alone.
 * `BENCH_SERVICE=tsx` runs the service from TypeScript through tsx instead of the build;
 * `BENCH_CPU_PROF=<dir>` writes the service's CPU profile (`--cpu-prof`) there.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';
import { Role } from '../src/auth/api-token.entity.js';
import type { Notifier } from '../src/db/notifier.js';
import { systemClock } from '../src/clock.js';
import { CallGuard } from '../src/guards/call-guard.js';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics/metrics.js';
import { CallStatus } from '../src/turns/call-status.js';
import { declareTools } from '../src/turns/declare.js';
import * as sourceDeclarations from '../src/turns/dialects/declarations.js';
import { TOOL_DIALECTS, type ToolDialect } from '../src/turns/dialects/dialect.js';
import type { CachedOperation } from '../src/turns/tool-cache.js';
import {
  benchDatabase,
  cpuBetween,
  fmt,
  graphqlClient,
  load,
  percentile,
  pgBackends,
  processCpuMs,
  root,
  startBenchApp,
  startPeerProcess,
  startRawPeerProcess,
  startListedPeerProcess,
  startServiceProcess,
  type Gql,
} from './support.js';
import { corpusTools } from './corpus-tools.js';

/**
 * CallGuard's own CPU per call (admit, then report a success), in this process: with no limit or
 * breaker stored for the connection, and under a limit whose leases a stand-in database grants.
 */
async function guardCost(): Promise<{ noneUs: number; limitedUs: number; cappedUs: number }> {
  const notifier = { onGuards: () => () => undefined, onReset: () => () => undefined } as unknown as Notifier;
  const connectionId = '00000000-0000-4000-8000-000000000001';
  const limit = {
    id: '00000000-0000-4000-8000-000000000002',
    scope: 'CONNECTION',
    workspace_id: connectionId,
    connection_id: connectionId,
    operation_id: null,
    for_workspace_id: null,
    calls: 1_000_000,
    period_ms: 60_000,
    burst: 100_000,
  };
  const op = {
    id: '00000000-0000-4000-8000-000000000003',
    key: 'connector.raw.tool_1',
    risk: 'READ',
    connection: { id: connectionId, slug: 'raw', timeoutMs: null },
  } as unknown as CachedOperation;
  // A concurrency cap far above the load (issue 29): slots are leased once, then spent in memory.
  const cap = {
    id: '00000000-0000-4000-8000-000000000004',
    scope: 'CONNECTION',
    workspace_id: connectionId,
    connection_id: connectionId,
    operation_id: null,
    max_in_flight: 100,
    max_wait_ms: 1000,
  };
  const measure = async (limits: object[], caps: object[] = []) => {
    let t = Date.now();
    const sql = {
      execute: async (text: string, params?: unknown[]) => {
        if (/^select .* from call_limit$/s.test(text.trim())) return limits;
        if (/^select .* from call_cap$/s.test(text.trim())) return caps;
        if (/^select ct_cap_hold/.test(text.trim())) return [{ held: Number(params?.[2] ?? 0) }];
        if (/^select .* from call_(limit|breaker|cap)/s.test(text.trim())) return [];
        return [{ granted: Number(params?.[3] ?? 1), available: 100_000 }];
      },
    };
    const guard = new CallGuard(() => sql, notifier, createLogger('silent'), new Metrics(), {
      clock: { ...systemClock, now: () => t },
    });
    await guard.start();
    const once = async () => {
      t += 0.05; // 20,000 calls a second of the guard's clock: leases expire and renew as they would
      const admitted = guard.admit(op, connectionId, 'raw__tool_1');
      const a = admitted instanceof Promise ? await admitted : admitted;
      if (a.ok) guard.report(op, a, CallStatus.SUCCEEDED);
    };
    for (let i = 0; i < 20_000; i++) await once();
    const n = 200_000;
    const c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await once();
    const c = process.cpuUsage(c0);
    await guard.shutdown();
    return (c.user + c.system) / n;
  };
  return { noneUs: await measure([]), limitedUs: await measure([limit]), cappedUs: await measure([], [cap]) };
}

const TOOLS = 300;
const RAW_TOOLS = 30;
const BEGIN_TURNS = 200;
/** callTool warm-up before anything is measured (see there). */
const WARM_CALLS = 4000;
/** Interleaved batches: API then bare POST, BATCHES times, at each concurrency. */
const BATCHES = 10;
const BATCH_CALLS = { 1: 40, 32: 480 } as const;

interface Goal {
  what: string;
  value: string;
  baseline: string;
  met: boolean;
}

/** Timed cold compiles per dialect (after the first in the process, timed apart). */
const COLD_RUNS = 25;

/**
 * Cold compiles of one tool list per dialect, fresh memo each time, in this process, on what the
 * service compiles:
 * - The schemas as the service holds them: parsed JSON. Its tool cache reads them from PostgreSQL
 *   (`jsonb`, which the driver hands over through `JSON.parse`), never the converter's own objects,
 *   built key by key. Fed those, the same compiler took about 1.7 times as long here (OPENAI_STRICT
 *   p50 37.7 and 42.1 ms against 24.1 and 22.1 ms, 2026-12-04). Alternating the two in one
 *   process made both slow, within 10 % of each other: once V8's code for the compiler has seen
 *   the converter's objects, it stays slower for every input.
 * - With the service compiled, the build's compiler (`dist/`, what `npm start` runs), not this
 *   process's TypeScript through tsx, whose transform made the same compile about a quarter slower.
 */
async function coldCompiles(
  tools: ReturnType<typeof corpusTools>['tools'],
  compiled: boolean,
): Promise<
  {
    dialect: ToolDialect;
    firstMs: number;
    p50Ms: number;
    /** The same-run baseline: JSON.parse of the 300 schemas' text, interleaved with the compiles. */
    parseP50Ms: number;
    declared: number;
    leftOut: number;
  }[]
> {
  const { compileToolList } = compiled
    ? ((await import(
        pathToFileURL(join(root, 'dist', 'src', 'turns', 'dialects', 'declarations.js')).href
      )) as typeof sourceDeclarations)
    : sourceDeclarations;
  const list = declareTools({
    builtIns: [],
    operations: (JSON.parse(JSON.stringify(tools)) as typeof tools).map((t, i) => ({
      operationId: `op-${i}`,
      connectionSlug: 'stripe',
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    })),
  });
  const schemasText = JSON.stringify(list.tools.map((t) => t.inputSchema));
  return TOOL_DIALECTS.filter((d) => d !== 'GENERIC').map((dialect) => {
    let t0 = performance.now();
    const first = compileToolList(dialect, list, (id) => id, new WeakMap());
    const firstMs = performance.now() - t0;
    const times: number[] = [];
    const parses: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      t0 = performance.now();
      compileToolList(dialect, list, (id) => id, new WeakMap());
      times.push(performance.now() - t0);
      t0 = performance.now();
      JSON.parse(schemasText);
      parses.push(performance.now() - t0);
    }
    return {
      dialect,
      firstMs,
      p50Ms: percentile(times, 50),
      parseP50Ms: percentile(parses, 50),
      declared: first.tools.length,
      leftOut: first.leftOut.length,
    };
  });
}

/**
 * beginTurn with 300 corpus tools in every dialect, warm, interleaved in batches beside GENERIC;
 * each asks what its runtime needs: GENERIC `name description inputSchema`, a dialect `declaration`
 * and `leftOut` (answers of different sizes: Chat Completions and Gemini take 128 tools, and list
 * the other 173 in `leftOut`), tool search OFF so that every tool is declared. Also the same turns asking `turnId` only: the dialect's own cost
 * (one cached lookup) apart from serializing the lists.
 */
async function dialectBegins(
  A: Awaited<ReturnType<typeof startBenchApp>>,
  s: { gql: Gql },
  admin: string,
  runtime: string,
  workspaceId: string,
  peerUrl: string,
): Promise<Record<'firstMs' | 'p50' | 'p95' | 'bareP50' | 'bytes' | 'declared', Record<string, number>>> {
  const asst = await A.gql<{ createAssistant: { assistant: { id: string } } }>(
    'mutation($w: ID!, $n: String!) { createAssistant(input: { workspaceId: $w, name: $n }) { assistant { id } } }',
    { w: workspaceId, n: 'Stripe' },
    admin,
  );
  const conn = await A.gql<{
    createConnection: { connection: { id: string }; discoveryRun: { added: number } };
  }>(
    'mutation($w: ID!, $n: String!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: $n, endpointUrl: $u }) { connection { id } discoveryRun { added } } }',
    { w: workspaceId, n: 'Stripe', u: peerUrl },
    admin,
  );
  const assistantId = asst.createAssistant.assistant.id;
  await A.gql(
    'mutation($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { changed } }',
    { a: assistantId, c: conn.createConnection.connection.id },
    admin,
  );
  /** `full`: what the runtime asks for; else `turnId` only (nothing of the list serialized). */
  const begin = (dialect: ToolDialect, full = true) =>
    s.gql<{ beginTurn: { tools?: unknown[] } }>(
      !full
        ? 'mutation($a: ID!, $c: String!, $d: ToolDialect!) { beginTurn(input: { assistantId: $a, conversationId: $c, dialect: $d, toolSearch: { mode: OFF } }) { turnId } }'
        : dialect === 'GENERIC'
          ? 'mutation($a: ID!, $c: String!) { beginTurn(input: { assistantId: $a, conversationId: $c, toolSearch: { mode: OFF } }) { turnId tools { name description inputSchema } } }'
          : 'mutation($a: ID!, $c: String!, $d: ToolDialect!) { beginTurn(input: { assistantId: $a, conversationId: $c, dialect: $d, toolSearch: { mode: OFF } }) { turnId tools { declaration } leftOut { name code } } }',
      dialect === 'GENERIC' && full
        ? { a: assistantId, c: 'bench' }
        : { a: assistantId, c: 'bench', d: dialect },
      runtime,
    );
  // The first beginTurn of each dialect compiles its list (then cached with the tool cache).
  const firstMs: Record<string, number> = {};
  const bytes: Record<string, number> = {};
  const declared: Record<string, number> = {};
  for (const d of TOOL_DIALECTS) {
    const t0 = performance.now();
    const r = await begin(d);
    firstMs[d] = performance.now() - t0;
    bytes[d] = JSON.stringify(r).length;
    declared[d] = r.beginTurn.tools?.length ?? 0;
  }
  for (const d of TOOL_DIALECTS) {
    await load(() => begin(d), 60, 1);
    await load(() => begin(d, false), 60, 1);
  }
  const lat: Record<string, number[]> = Object.fromEntries(TOOL_DIALECTS.map((d) => [d, []]));
  const bare: Record<string, number[]> = Object.fromEntries(TOOL_DIALECTS.map((d) => [d, []]));
  for (let b = 0; b < BATCHES; b++)
    for (const d of TOOL_DIALECTS) {
      lat[d]!.push(...(await load(() => begin(d), BEGIN_TURNS / BATCHES, 1)).latencies);
      bare[d]!.push(...(await load(() => begin(d, false), BEGIN_TURNS / BATCHES, 1)).latencies);
    }
  const p = (from: Record<string, number[]>, q: number) =>
    Object.fromEntries(TOOL_DIALECTS.map((d) => [d, percentile(from[d]!, q)]));
  return { firstMs, p50: p(lat, 50), p95: p(lat, 95), bareP50: p(bare, 50), bytes, declared };
}

async function dialectLines(
  goals: Goal[],
  A: Awaited<ReturnType<typeof startBenchApp>>,
  s: { gql: Gql },
  admin: string,
  runtime: string,
  workspaceId: string,
  compiled: boolean,
): Promise<void> {
  const { source, tools } = corpusTools(TOOLS);
  console.log(`dialects: ${tools.length} tools from ${source}`);
  const cold = await coldCompiles(tools, compiled);
  for (const c of cold)
    console.log(
      `  cold compile (${compiled ? 'the build' : 'tsx'}), ${tools.length} tools, ${c.dialect}: p50 ${fmt(c.p50Ms)} ms, ${fmt(c.p50Ms / c.parseP50Ms, 1)}× a JSON.parse of their schemas (${fmt(c.parseP50Ms)} ms, interleaved) (fresh memo, ${COLD_RUNS} runs; the first in this process ${fmt(c.firstMs)} ms); ${c.declared} declared, ${c.leftOut} left out`,
    );
  const worst = cold.reduce((a, b) => (b.p50Ms > a.p50Ms ? b : a));
  goals.push({
    what: `cold compile of ${tools.length} corpus tools per dialect < 50 ms (issue 26)`,
    value: `slowest ${worst.dialect} p50 ${fmt(worst.p50Ms)} ms (${fmt(worst.p50Ms / worst.parseP50Ms, 1)}× a JSON.parse of the schemas)`,
    baseline: cold.map((c) => `${c.dialect} ${fmt(c.p50Ms)}`).join(', '),
    met: worst.p50Ms < 50,
  });

  const dir = await mkdtemp(join(tmpdir(), 'ct-bench-dialects-'));
  const file = join(dir, 'tools.json');
  await writeFile(file, JSON.stringify(tools));
  const peer = await startListedPeerProcess(file);
  try {
    const r = await dialectBegins(A, s, admin, runtime, workspaceId, peer.url);
    const base = r.p50.GENERIC!;
    const bareBase = r.bareP50.GENERIC!;
    let worstDiff = -Infinity;
    let worstBare = -Infinity;
    for (const d of TOOL_DIALECTS) {
      const diff = r.p50[d]! - base;
      const bareDiff = r.bareP50[d]! - bareBase;
      if (d !== 'GENERIC') {
        worstDiff = Math.max(worstDiff, diff);
        worstBare = Math.max(worstBare, bareDiff);
      }
      const vs = (x: number) =>
        d === 'GENERIC' ? ' (baseline)' : ` (${x >= 0 ? '+' : ''}${fmt(x)} ms vs GENERIC)`;
      console.log(
        `  beginTurn, ${d}: ${r.declared[d]} tools, ${fmt(r.bytes[d]! / 1024, 0)} KiB answer: p50 ${fmt(r.p50[d]!)} ms${vs(diff)}, p95 ${fmt(r.p95[d]!)} ms; ` +
          `asking turnId only: p50 ${fmt(r.bareP50[d]!)} ms${vs(bareDiff)}; its first turn (compiles) ${fmt(r.firstMs[d]!)} ms`,
      );
    }
    goals.push({
      what: `beginTurn with ${tools.length} corpus tools in every dialect: p50 within 0.5 ms of GENERIC, warm (issue 26)`,
      value: `worst +${fmt(worstBare)} ms asking turnId only; +${fmt(worstDiff)} ms with each runtime's full tool list (answers of different sizes)`,
      baseline: `GENERIC p50 ${fmt(bareBase)} ms and ${fmt(base)} ms`,
      met: worstBare <= 0.5,
    });
  } finally {
    await peer.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const compiled = process.env.BENCH_SERVICE !== 'tsx';
  if (compiled) {
    console.log('building the service (npm run build) so that it runs as npm start runs it…');
    execFileSync(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: root,
        stdio: 'inherit',
      },
    );
  }
  const goals: Goal[] = [];
  const db = await benchDatabase();
  const sdkPeer = await startPeerProcess(TOOLS);
  const rawPeer = await startRawPeerProcess(RAW_TOOLS);
  const A = await startBenchApp(db.url);
  const B = await startBenchApp(db.url);
  const profileDir = process.env.BENCH_CPU_PROF;
  const S = await startServiceProcess(db.url, {
    compiled,
    nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  const s = graphqlClient(S.url);
  const backends = await pgBackends(db.url);
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  try {
    const admin = await A.token(Role.ADMIN);
    const runtime = await A.token(Role.RUNTIME);
    const ws = await A.gql<{ createWorkspace: { workspace: { id: string } } }>(
      'mutation($n: String!) { createWorkspace(input: { name: $n }) { workspace { id } } }',
      { n: 'Bench' },
      admin,
    );
    const workspaceId = ws.createWorkspace.workspace.id;
    if (process.env.BENCH_TURNS_ONLY === 'dialects') {
      await dialectLines(goals, A, s, admin, runtime, workspaceId, compiled);
      console.log(`\ngoals (issue 26; service ${compiled ? 'compiled' : 'through tsx'}):`);
      for (const g of goals)
        console.log(`  ${g.met ? 'MET   ' : 'MISSED'} ${g.what}: ${g.value} (same run: ${g.baseline})`);
      return;
    }
    const setup = async (name: string, url: string) => {
      const asst = await A.gql<{ createAssistant: { assistant: { id: string } } }>(
        'mutation($w: ID!, $n: String!) { createAssistant(input: { workspaceId: $w, name: $n }) { assistant { id } } }',
        { w: workspaceId, n: name },
        admin,
      );
      const conn = await A.gql<{
        createConnection: { connection: { id: string }; discoveryRun: { added: number } };
      }>(
        'mutation($w: ID!, $n: String!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: $n, endpointUrl: $u }) { connection { id } discoveryRun { added } } }',
        { w: workspaceId, n: name, u: url },
        admin,
      );
      const assistantId = asst.createAssistant.assistant.id;
      const connectionId = conn.createConnection.connection.id;
      await A.gql(
        'mutation($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { changed } }',
        { a: assistantId, c: connectionId },
        admin,
      );
      return { assistantId, connectionId, added: conn.createConnection.discoveryRun.added };
    };
    const sdk = await setup('Bench', sdkPeer.url);
    const raw = await setup('Raw', rawPeer.url);
    console.log(`SDK peer: ${sdk.added} tools; raw peer: ${raw.added} tools (every tenth a WRITE)`);
    // The raw peer's WRITEs start switched off: switch one on.
    const rawOps = await A.gql<{ connection: { operations: { nodes: { id: string; name: string }[] } } }>(
      'query($c: ID!) { connection(id: $c) { operations(first: 100) { nodes { id name } } } }',
      { c: raw.connectionId },
      admin,
    );
    const writeOp = rawOps.connection.operations.nodes.find((n) => n.name === 'write_9')!;
    await A.gql(
      'mutation($o: ID!) { enable(input: { operationId: $o }) { operation { id } } }',
      { o: writeOp.id },
      admin,
    );

    // --- beginTurn, 300 tools
    const beginOn = (gql: Gql, assistantId: string) =>
      gql<{ beginTurn: { turnId: string; tools: { name: string }[] } }>(
        'mutation($a: ID!, $c: String!) { beginTurn(input: { assistantId: $a, conversationId: $c, toolSearch: { mode: OFF } }) { turnId tools { name description inputSchema } } }',
        { a: assistantId, c: 'bench' },
        runtime,
      );
    const warm = await beginOn(A.gql, sdk.assistantId);
    console.log(
      `beginTurn declares ${warm.beginTurn.tools.length} tools (built-ins + ${TOOLS} + finish_turn)`,
    );
    A.queries.length = 0;
    await load(() => beginOn(A.gql, sdk.assistantId), BEGIN_TURNS, 1);
    const statements = A.queries.length / BEGIN_TURNS;
    const ping = () => s.gql('{ __typename }', {}, runtime);
    await load(() => beginOn(s.gql, sdk.assistantId), 50, 1);
    await load(ping, 50, 1);
    const turnsS: number[] = [];
    const pings: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      turnsS.push(...(await load(() => beginOn(s.gql, sdk.assistantId), BEGIN_TURNS / BATCHES, 1)).latencies);
      pings.push(...(await load(ping, BEGIN_TURNS / BATCHES, 1)).latencies);
    }
    const beginP50 = percentile(turnsS, 50);
    const pingP50 = percentile(pings, 50);
    console.log(
      `beginTurn, ${TOOLS} tools: ${fmt(statements, 2)} SQL statements per turn (the Turn insert only); p50 ${fmt(beginP50)} ms, p95 ${fmt(percentile(turnsS, 95))} ms; ` +
        `an authenticated { __typename } p50 ${fmt(pingP50)} ms`,
    );
    goals.push({
      what: `beginTurn with ${TOOLS} tools: p50 < 3 ms, 1 SQL statement (no tool data read)`,
      value: `p50 ${fmt(beginP50)} ms, ${fmt(statements, 2)} statements`,
      baseline: `{ __typename } p50 ${fmt(pingP50)} ms`,
      met: beginP50 < 3 && statements === 1,
    });

    // --- callTool against the raw peer, interleaved with a bare POST to it
    /** A callTool in a new turn; `strict`: the call must succeed (the SDK peer may time out under load). */
    const callVia = async (assistantId: string, tool: string, strict = true, gql: Gql = s.gql) => {
      const turnId = (await beginOn(gql, assistantId)).beginTurn.turnId;
      return async () => {
        const r = await gql<{ callTool: { ok: boolean; recorded: boolean } }>(
          'mutation($t: ID!, $n: String!) { callTool(input: { turnId: $t, name: $n, arguments: { q: "x" } }) { ok status recorded } }',
          { t: turnId, n: tool },
          runtime,
        );
        if ((strict && !r.callTool.ok) || !r.callTool.recorded)
          throw new Error(`callTool: ${JSON.stringify(r.callTool)}`);
      };
    };
    const bareTo = (peerUrl: string) => {
      const url = new URL(peerUrl);
      const pool = new Pool(url.origin, { connections: 64 });
      let id = 1;
      const call = async () => {
        const res = await pool.request({
          path: url.pathname,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: id++,
            method: 'tools/call',
            params: { name: 'tool_1', arguments: { q: 'x' } },
          }),
        });
        const body = (await res.body.json()) as { result?: unknown };
        if (body.result === undefined) throw new Error('bare call failed');
      };
      return { call, close: () => pool.close() };
    };

    const rawName = 'raw__tool_1';
    const callRaw = await callVia(raw.assistantId, rawName);
    const bareRaw = bareTo(rawPeer.url);
    // Warm-up: a long-lived service runs its call path optimised, and V8 gets there only after a
    // few thousand calls. Measured here: after 640 calls c=1 read 2.0–2.2 ms and 1.5–1.6 ms of
    // service CPU per call; after 2,000 more (at c=1 or at c=32 alike) 1.6–1.7 ms and 1.0 ms, and
    // it stays there. Both sides get the same.
    const warmUp = async (fn: () => Promise<unknown>) => {
      await load(fn, WARM_CALLS, 32);
      await load(fn, WARM_CALLS / 10, 1);
    };
    await warmUp(callRaw);
    await warmUp(bareRaw.call);
    for (const concurrency of [1, 32] as const) {
      const calls = BATCH_CALLS[concurrency];
      const api: number[] = [];
      const bare: number[] = [];
      let apiWall = 0;
      let bareWall = 0;
      let serviceCpu = 0;
      let pgCpu = 0;
      let bareCpu = 0;
      for (let b = 0; b < BATCHES; b++) {
        const svc0 = processCpuMs(S.pid);
        const pg0 = await backends.read();
        const a = await load(callRaw, calls, concurrency);
        serviceCpu += processCpuMs(S.pid) - svc0;
        pgCpu += cpuBetween(pg0, await backends.read());
        const me0 = process.cpuUsage();
        const c = await load(bareRaw.call, calls, concurrency);
        const me = process.cpuUsage(me0);
        bareCpu += (me.user + me.system) / 1000;
        api.push(...a.latencies);
        bare.push(...c.latencies);
        apiWall += a.wallMs;
        bareWall += c.wallMs;
      }
      const n = calls * BATCHES;
      const apiP50 = percentile(api, 50);
      const bareP50 = percentile(bare, 50);
      const apiRate = (n / apiWall) * 1000;
      const bareRate = (n / bareWall) * 1000;
      console.log(
        `callTool (raw peer) c=${concurrency}: API p50 ${fmt(apiP50)} ms vs bare POST p50 ${fmt(bareP50)} ms → added ${fmt(apiP50 - bareP50)} ms; ` +
          `${fmt(apiRate, 0)} recorded calls/s vs ${fmt(bareRate, 0)} bare calls/s; ` +
          `CPU per call: service ${fmt(serviceCpu / n)} ms, PostgreSQL ${fmt(pgCpu / n)} ms (the bare POST's client: ${fmt(bareCpu / n)} ms)`,
      );
      if (concurrency === 1)
        goals.push({
          what: 'callTool c=1: added p50 < 1.5 ms over a bare POST to the raw peer',
          value: `added ${fmt(apiP50 - bareP50)} ms (API p50 ${fmt(apiP50)} ms)`,
          baseline: `bare POST p50 ${fmt(bareP50)} ms`,
          met: apiP50 - bareP50 < 1.5,
        });
      else {
        goals.push(
          {
            what: 'callTool c=32: ≥ 1,500 recorded calls/s',
            value: `${fmt(apiRate, 0)} calls/s`,
            baseline: `bare POST ${fmt(bareRate, 0)} calls/s`,
            met: apiRate >= 1500,
          },
          {
            what: 'callTool c=32: service CPU ≤ 0.6 ms per call',
            value: `${fmt(serviceCpu / n)} ms`,
            baseline: `the bare POST's client ${fmt(bareCpu / n)} ms`,
            met: serviceCpu / n <= 0.6,
          },
          {
            what: 'callTool c=32: PostgreSQL CPU ≤ 0.6 ms per call',
            value: `${fmt(pgCpu / n)} ms`,
            baseline: `the bare POST's client ${fmt(bareCpu / n)} ms`,
            met: pgCpu / n <= 0.6,
          },
        );
      }
    }

    // --- under a configured rate limit (issue 29): the same c=32 calls to the raw peer through a
    // connection with a limit far above the load (so nothing is refused) against one without,
    // interleaved; then CallGuard alone, in this process, where its own cost is not lost in noise.
    {
      const free = await setup('Free', rawPeer.url);
      await A.gql(
        'mutation($c: ID!) { setCallLimit(input: { connectionId: $c, calls: 1000000, per: MINUTE, burst: 100000 }) { callLimit { calls } } }',
        { c: raw.connectionId },
        admin,
      );
      await new Promise((r) => setTimeout(r, 500)); // S hears the limit by NOTIFY
      const limited = await callVia(raw.assistantId, rawName);
      const unlimited = await callVia(free.assistantId, 'free__tool_1');
      await warmUp(limited);
      await warmUp(unlimited);
      const cpu = { limited: 0, unlimited: 0 };
      const calls = BATCH_CALLS[32];
      for (let b = 0; b < BATCHES; b++) {
        for (const [which, fn] of [
          ['limited', limited],
          ['unlimited', unlimited],
        ] as const) {
          const svc0 = processCpuMs(S.pid);
          await load(fn, calls, 32);
          cpu[which] += processCpuMs(S.pid) - svc0;
        }
      }
      const n = calls * BATCHES;
      const guard = await guardCost();
      console.log(
        `callTool (raw peer) c=32 under a rate limit: service CPU per call ${fmt(cpu.limited / n, 3)} ms vs ${fmt(cpu.unlimited / n, 3)} ms without (same run; difference ${fmt((cpu.limited - cpu.unlimited) / n, 3)} ms); ` +
          `CallGuard alone: ${fmt(guard.limitedUs, 2)} µs per call under a limit, ${fmt(guard.cappedUs, 2)} µs under a concurrency cap, ${fmt(guard.noneUs, 3)} µs with none`,
      );
      goals.push({
        what: 'a call under a configured concurrency cap: < 0.05 ms of service CPU per call (issue 29)',
        value: `CallGuard ${fmt(guard.cappedUs / 1000, 4)} ms`,
        baseline: `no cap: CallGuard ${fmt(guard.noneUs / 1000, 5)} ms`,
        met: guard.cappedUs / 1000 < 0.05,
      });
      goals.push({
        what: 'callTool under a configured rate limit: < 0.05 ms of service CPU per call (issue 29)',
        value: `CallGuard ${fmt(guard.limitedUs / 1000, 4)} ms; through the service ${fmt((cpu.limited - cpu.unlimited) / n, 3)} ms more than without`,
        baseline: `no limit: CallGuard ${fmt(guard.noneUs / 1000, 5)} ms`,
        met: guard.limitedUs / 1000 < 0.05,
      });
      await A.gql(
        'mutation($c: ID!) { setCallLimit(input: { connectionId: $c, calls: null }) { userErrors { code } } }',
        { c: raw.connectionId },
        admin,
      );
    }

    // --- the same c=1 calls through an instance with READ_RECORD_COMMIT=sync, where a quick READ's
    // record waits for its disk flush too: what the default's trade buys (docs/ledger.md)
    {
      const durable = await startServiceProcess(db.url, { compiled, env: { READ_RECORD_COMMIT: 'sync' } });
      const d = graphqlClient(durable.url);
      try {
        const callDurable = await callVia(raw.assistantId, rawName, true, d.gql);
        await warmUp(callDurable);
        const api: number[] = [];
        const bare: number[] = [];
        for (let b = 0; b < BATCHES; b++) {
          api.push(...(await load(callDurable, BATCH_CALLS[1], 1)).latencies);
          bare.push(...(await load(bareRaw.call, BATCH_CALLS[1], 1)).latencies);
        }
        const apiP50 = percentile(api, 50);
        const bareP50 = percentile(bare, 50);
        console.log(
          `callTool (raw peer) c=1 with READ_RECORD_COMMIT=sync: API p50 ${fmt(apiP50)} ms vs bare POST p50 ${fmt(bareP50)} ms → added ${fmt(apiP50 - bareP50)} ms`,
        );
      } finally {
        await d.close();
        await durable.stop();
      }
    }
    await bareRaw.close();

    // --- WRITE calls (a ledger intent before, an outcome after): rate, CPU, and the records
    {
      const callWrite = await callVia(raw.assistantId, 'raw__write_9');
      await load(callWrite, 64, 32);
      const before = await sql.query<{ n: string }>('select count(*) as n from ledger_entry');
      const calls = 960;
      const svc0 = processCpuMs(S.pid);
      const pg0 = await backends.read();
      const w = await load(callWrite, calls, 32);
      const serviceCpu = processCpuMs(S.pid) - svc0;
      const pgCpu = cpuBetween(pg0, await backends.read());
      const after = await sql.query<{ n: string; o: string }>(
        'select (select count(*) from ledger_entry) as n, (select count(*) from ledger_outcome) as o',
      );
      console.log(
        `callTool WRITE (raw peer) c=32: ${fmt((calls / w.wallMs) * 1000, 0)} recorded calls/s, p50 ${fmt(percentile(w.latencies, 50))} ms; ` +
          `CPU per call: service ${fmt(serviceCpu / calls)} ms, PostgreSQL ${fmt(pgCpu / calls)} ms; ` +
          `ledger rows added ${Number(after.rows[0]!.n) - Number(before.rows[0]!.n)} for ${calls} calls`,
      );
    }

    // --- callTool against the SDK peer (300 tools), as before
    {
      const callSdk = await callVia(sdk.assistantId, 'bench__tool_1', false);
      const bareSdk = bareTo(sdkPeer.url);
      await load(callSdk, 200, 8);
      await load(bareSdk.call, 200, 8);
      for (const concurrency of [1, 32]) {
        const total = concurrency === 1 ? 200 : 960;
        const api = await load(callSdk, total, concurrency);
        const base = await load(bareSdk.call, total, concurrency);
        const apiP50 = percentile(api.latencies, 50);
        const baseP50 = percentile(base.latencies, 50);
        console.log(
          `callTool (SDK peer) c=${concurrency}: API p50 ${fmt(apiP50)} ms vs bare POST p50 ${fmt(baseP50)} ms → added ${fmt(apiP50 - baseP50)} ms; ` +
            `${fmt((total / api.wallMs) * 1000, 0)} recorded calls/s vs ${fmt((total / base.wallMs) * 1000, 0)} bare calls/s`,
        );
      }
      await bareSdk.close();
    }

    // --- the dialects of issue 26: cold compiles, and beginTurn per dialect beside GENERIC
    await dialectLines(goals, A, s, admin, runtime, workspaceId, compiled);

    // --- disable propagation A → B
    const ops = await A.gql<{ connection: { operations: { nodes: { id: string; name: string }[] } } }>(
      'query($c: ID!) { connection(id: $c) { operations(first: 1) { nodes { id name } } } }',
      { c: sdk.connectionId },
      admin,
    );
    const opId = ops.connection.operations.nodes[0]!.id;
    const declaredName = `bench__${ops.connection.operations.nodes[0]!.name}`;
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await beginOn(B.gql, sdk.assistantId); // warm B's cache
      const t0 = performance.now();
      await A.gql(
        'mutation($o: ID!) { disable(input: { operationId: $o, reason: "bench" }) { operation { id } } }',
        { o: opId },
        admin,
      );
      for (;;) {
        const tools = (await beginOn(B.gql, sdk.assistantId)).beginTurn.tools.map((t) => t.name);
        if (!tools.includes(declaredName)) break;
        if (performance.now() - t0 > 5_000) throw new Error('disable did not propagate within 5 s');
      }
      times.push(performance.now() - t0);
      await A.gql(
        'mutation($o: ID!) { enable(input: { operationId: $o }) { operation { id } } }',
        { o: opId },
        admin,
      );
    }
    const maxMs = Math.max(...times);
    console.log(
      `disable propagation A → B: median ${fmt(percentile(times, 50), 1)} ms, max ${fmt(maxMs, 1)} ms`,
    );
    goals.push({
      what: 'incident switch: a disable reaches another instance within 1 s',
      value: `max ${fmt(maxMs, 1)} ms`,
      baseline: `median ${fmt(percentile(times, 50), 1)} ms`,
      met: maxMs < 1000,
    });

    console.log(`\ngoals (issue 15; service ${compiled ? 'compiled' : 'through tsx'}):`);
    for (const g of goals)
      console.log(`  ${g.met ? 'MET   ' : 'MISSED'} ${g.what}: ${g.value} (same run: ${g.baseline})`);
  } finally {
    await sql.end();
    await backends.close();
    await s.close();
    await S.stop();
    await A.stop();
    await B.stop();
    await sdkPeer.stop();
    await rawPeer.stop();
    await db.cleanup();
  }
}
