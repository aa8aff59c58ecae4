/**
 * `npm run bench -- usage`: a dashboard's 30-day, per-tool, per-day usage question over 1 million
 * recorded calls, through the GraphQL API, after the roll-up; goal p50 under 100 ms. The baseline,
 * measured in the same run, is the same question asked of the raw calls in plain SQL
 * (`percentile_cont` over `turn_call`), which is what the roll-up saves.
 */
import { Role } from '../src/auth/api-token.entity.js';
import { Connection, ConnectionKind } from '../src/connections/connection.entity.js';
import { toGlobalId } from '../src/graphql/node.js';
import { Operation } from '../src/operations/operation.entity.js';
import { RiskLevel } from '../src/operations/types.js';
import { Assistant } from '../src/assistants/assistant.entity.js';
import { UsageRollup } from '../src/usage/rollup.js';
import { Workspace } from '../src/workspaces/workspace.entity.js';
import { benchDatabase, fmt, load, percentile, startBenchApp } from './support.js';

const CALLS = 1_000_000;
const TURNS = 20_000;
const DAY = 86_400_000;
const GOAL_MS = 100;
const RUNS = 15;

const QUERY = `query($w: ID!, $from: DateTimeISO!, $to: DateTimeISO!) {
  workspace(id: $w) {
    usage(from: $from, to: $to, bucket: DAY, groupBy: TOOL) {
      total { calls errors errorRate p50DurationMs p95DurationMs }
      series { tool points { start calls errors errorRate p50DurationMs p95DurationMs } }
    }
  }
}`;

const BASELINE = `
select date_trunc('day', started_at, 'UTC') as day, operation_key, count(*) as calls,
  count(*) filter (where status <> 'SUCCEEDED') as errors,
  percentile_cont(0.5) within group (order by duration_ms) as p50,
  percentile_cont(0.95) within group (order by duration_ms) as p95
from turn_call where workspace_id = ? and started_at >= ? and started_at < ?
group by 1, 2 order by 1, 2`;

export async function run(): Promise<void> {
  const db = await benchDatabase();
  const app = await startBenchApp(db.url);
  try {
    const admin = await app.token(Role.ADMIN);
    const em = app.app.services.orm.em.fork();
    const ws = new Workspace('usage bench');
    const wsRef = em.getReference(Workspace, ws.id, { wrapped: true });
    const assistants = [new Assistant(wsRef, 'a1'), new Assistant(wsRef, 'a2')];
    em.persist([ws, ...assistants]);
    const ops: Operation[] = [];
    for (let c = 0; c < 2; c++) {
      const conn = new Connection(wsRef, ConnectionKind.MCP, `c${c}`, `c${c}`);
      conn.endpointUrl = 'https://example.com/mcp';
      em.persist(conn);
      for (let o = 0; o < 10; o++) {
        const op = new Operation({
          workspace: wsRef,
          connection: em.getReference(Connection, conn.id, { wrapped: true }),
          key: `connector.c${c}.op${o}`,
          name: `op${o}`,
          inputSchema: { type: 'object' },
          risk: RiskLevel.READ,
          enabled: true,
        });
        ops.push(op);
        em.persist(op);
      }
    }
    await em.flush();

    const to = Math.floor(Date.now() / DAY) * DAY + DAY;
    const from = to - 30 * DAY;
    const span = Date.now() - 5 * 60_000 - from;
    const sql = app.app.services.orm.em.getConnection();
    const t0 = performance.now();
    await sql.execute(
      `insert into turn (id, workspace_id, assistant_id, conversation_id, started_at, declared_tools, call_seq)
       select (lpad(to_hex(?::bigint + i), 12, '0') || lpad(to_hex(i), 20, '0'))::uuid, ?, (?::uuid[])[1 + i % 2], 'c' || i,
              to_timestamp((?::bigint + i) / 1000.0), '[]', 0
       from generate_series(0, ? - 1) i`,
      [from, ws.id, `{${assistants.map((a) => a.id).join(',')}}`, from, TURNS],
    );
    await sql.execute(
      `insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name, arguments,
         status, message, attempts, resends, duration_ms, risk, started_at, finished_at)
       select (lpad(to_hex(s.ms), 12, '0') || lpad(to_hex(i), 20, '0'))::uuid,
              (lpad(to_hex(?::bigint + i % ?), 12, '0') || lpad(to_hex(i % ?), 20, '0'))::uuid, ?, i,
              (?::text[])[1 + i % 20], (?::uuid[])[1 + i % 20], 'x', '{}',
              case when i % 20 = 0 then 'TOOL_ERROR' when i % 50 = 1 then 'TIMEOUT' else 'SUCCEEDED' end,
              null, 1, 0, floor(exp(((i::bigint * 7919) % 1000) / 1000.0 * 9))::int, 'READ', to_timestamp(s.ms / 1000.0), to_timestamp(s.ms / 1000.0)
       from generate_series(0, ? - 1) i, lateral (select ?::bigint + (i::bigint * ?::bigint / ?) as ms) s`,
      [
        from,
        TURNS,
        TURNS,
        ws.id,
        `{${ops.map((o) => o.key).join(',')}}`,
        `{${ops.map((o) => o.id).join(',')}}`,
        CALLS,
        from,
        span,
        CALLS,
      ],
    );
    await sql.execute(`analyze turn_call`);
    const generatedMs = performance.now() - t0;
    await sql.execute(`update usage_rollup set hours_until = ?, days_until = ?`, [
      new Date(from).toISOString(),
      new Date(from).toISOString(),
    ]);
    const t1 = performance.now();
    const rollup = new UsageRollup(app.app.services.orm, app.app.services.logger, {
      everyMs: 60_000,
      settleMs: 20 * 60_000,
    });
    const hours = await rollup.runOnce();
    await sql.execute(`analyze usage_hour`);
    await sql.execute(`analyze usage_day`);
    const rollupMs = performance.now() - t1;
    console.log(
      `${CALLS} calls over 30 days generated in ${fmt(generatedMs / 1000, 1)} s; roll-up of ${hours} hours in ${fmt(rollupMs / 1000, 1)} s`,
    );

    const variables = {
      w: toGlobalId('Workspace', ws.id),
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
    };
    const ask = () =>
      app.gql<{ workspace: { usage: { total: { calls: number } } } }>(QUERY, variables, admin);
    const answer = await ask();
    if (answer.workspace.usage.total.calls !== CALLS) {
      throw new Error(`usage counted ${answer.workspace.usage.total.calls} calls, expected ${CALLS}`);
    }
    await load(ask, 3, 1);
    app.queries.length = 0;
    await ask();
    const statements = app.queries.length;
    const usageSql = app.queries.find((q) => q.includes('usage_hour'));
    const api = await load(ask, RUNS, 1);
    const apiP50 = percentile(api.latencies, 50);

    const raw = await load(
      () => sql.execute(BASELINE, [ws.id, new Date(from).toISOString(), new Date(to).toISOString()]),
      3,
      1,
    );
    const rawP50 = percentile(raw.latencies, 50);
    console.log(`raw SQL over turn_call (baseline): p50 ${fmt(rawP50)} ms`);
    console.log(
      `usage through GraphQL (30 days, per tool, per day): p50 ${fmt(apiP50)} ms over ${RUNS} runs, ${statements} SQL statements; ${fmt(rawP50 / apiP50, 1)}× faster than the baseline`,
    );
    console.log(`goal p50 < ${GOAL_MS} ms: ${apiP50 < GOAL_MS ? 'MET' : 'MISSED'}`);
    if (apiP50 >= GOAL_MS && usageSql && process.argv.includes('--explain')) {
      const plan = await sql.execute<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${usageSql}`);
      console.log(plan.map((r) => r['QUERY PLAN']).join('\n'));
    }
  } finally {
    await app.stop();
    await db.cleanup();
  }
}
