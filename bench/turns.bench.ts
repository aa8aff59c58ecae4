/**
 * `npm run bench -- turns`, measured against baselines from the same run:
 * - beginTurn with 300 enabled tools: SQL statements per turn (goal: only the Turn insert) and latency;
 * - callTool through the API against a local SDK server, beside a bare undici POST to that server:
 *   added p50 latency (goal < 2 ms) and recorded calls per second at concurrency 1 and 32
 *   (goal ≥ 1,000/s at 32);
 * - disable propagation from one instance to another (goal < 1 s).
 */
import { Pool } from 'undici';
import { Role } from '../src/auth/api-token.entity.js';
import { benchDatabase, fmt, load, percentile, startBenchApp, startPeerProcess } from './support.js';

const TOOLS = 300;
const BEGIN_TURNS = 200;
const CALLS = 2_000;

export async function run(): Promise<void> {
  const db = await benchDatabase();
  const peer = await startPeerProcess(TOOLS);
  const A = await startBenchApp(db.url);
  const B = await startBenchApp(db.url);
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
      'mutation($w: ID!) { createAssistant(input: { workspaceId: $w, name: "bot" }) { assistant { id } } }',
      { w: workspaceId },
      admin,
    );
    const assistantId = asst.createAssistant.assistant.id;
    const conn = await A.gql<{
      createConnection: { connection: { id: string }; discoveryRun: { added: number } };
    }>(
      'mutation($w: ID!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: "Bench", endpointUrl: $u }) { connection { id } discoveryRun { added } } }',
      { w: workspaceId, u: peer.url },
      admin,
    );
    const connectionId = conn.createConnection.connection.id;
    await A.gql(
      'mutation($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { changed } }',
      { a: assistantId, c: connectionId },
      admin,
    );
    console.log(`discovered ${conn.createConnection.discoveryRun.added} tools; assistant has them all`);

    // --- beginTurn
    const begin = (app = A) =>
      app.gql<{ beginTurn: { turnId: string; tools: { name: string }[] } }>(
        'mutation($a: ID!, $c: String!) { beginTurn(input: { assistantId: $a, conversationId: $c }) { turnId tools { name description inputSchema } } }',
        { a: assistantId, c: 'bench' },
        runtime,
      );
    const warm = await begin();
    console.log(
      `beginTurn declares ${warm.beginTurn.tools.length} tools (built-ins + ${TOOLS} + finish_turn)`,
    );
    A.queries.length = 0;
    const turns = await load(() => begin(), BEGIN_TURNS, 1);
    const statements = A.queries.length / BEGIN_TURNS;
    console.log(
      `beginTurn, 300 tools: ${fmt(statements, 2)} SQL statements per turn (goal 1: the Turn insert); p50 ${fmt(percentile(turns.latencies, 50))} ms, p95 ${fmt(percentile(turns.latencies, 95))} ms`,
    );

    // --- callTool vs bare POST
    const turnId = warm.beginTurn.turnId;
    const callApi = () =>
      A.gql(
        'mutation($t: ID!) { callTool(input: { turnId: $t, name: "bench__tool_1", arguments: { q: "x" } }) { ok status } }',
        { t: turnId },
        runtime,
      );
    const peerUrl = new URL(peer.url);
    const bare = new Pool(peerUrl.origin, { connections: 64 });
    let id = 1;
    const callBare = async () => {
      const res = await bare.request({
        path: peerUrl.pathname,
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
      await res.body.json();
    };
    await load(callApi, 200, 8);
    await load(callBare, 200, 8);
    for (const concurrency of [1, 32]) {
      const total = concurrency === 1 ? CALLS / 4 : CALLS;
      const api = await load(callApi, total, concurrency);
      const base = await load(callBare, total, concurrency);
      const apiP50 = percentile(api.latencies, 50);
      const baseP50 = percentile(base.latencies, 50);
      console.log(
        `callTool c=${concurrency}: API p50 ${fmt(apiP50)} ms vs bare POST p50 ${fmt(baseP50)} ms → added ${fmt(apiP50 - baseP50)} ms (ratio ${fmt(apiP50 / baseP50)}); ` +
          `${fmt((total / api.wallMs) * 1000, 0)} recorded calls/s vs ${fmt((total / base.wallMs) * 1000, 0)} bare calls/s`,
      );
    }
    await bare.close();

    // --- disable propagation A → B
    const ops = await A.gql<{ connection: { operations: { nodes: { id: string; name: string }[] } } }>(
      'query($c: ID!) { connection(id: $c) { operations(first: 1) { nodes { id name } } } }',
      { c: connectionId },
      admin,
    );
    const opId = ops.connection.operations.nodes[0]!.id;
    const declaredName = `bench__${ops.connection.operations.nodes[0]!.name}`;
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await begin(B); // warm B's cache
      const t0 = performance.now();
      await A.gql(
        'mutation($o: ID!) { disable(input: { operationId: $o, reason: "bench" }) { operation { id } } }',
        { o: opId },
        admin,
      );
      for (;;) {
        const tools = (await begin(B)).beginTurn.tools.map((t) => t.name);
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
    console.log(
      `disable propagation A → B: median ${fmt(percentile(times, 50), 1)} ms, max ${fmt(Math.max(...times), 1)} ms (goal < 1000 ms)`,
    );
  } finally {
    await A.stop();
    await B.stop();
    await peer.stop();
    await db.cleanup();
  }
}
