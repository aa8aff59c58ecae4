/**
 * `npm run bench -- usage`: a dashboard's 30-day, per-tool, per-day usage question over 1 million
 * recorded calls, through the GraphQL API of the service as `npm start` runs it (its own process,
 * compiled; `BENCH_SERVICE=tsx` runs the sources), after the roll-up; goal p50 under 100 ms. Prints
 * p50/p95, the statements per question, CPU per question (service and PostgreSQL, from /proc), and
 * the roll-up's own cost. The baseline, measured in the same run, is the same question asked of the
 * raw calls in plain SQL (`percentile_cont` over `turn_call`), which is what the roll-up saves.
 * `--explain` prints the question's plan; `BENCH_CPU_PROF=dir` profiles the service.
 */
import { Role } from '../src/auth/api-token.entity.js';
import { Connection, ConnectionKind } from '../src/connections/connection.entity.js';
import { toGlobalId } from '../src/graphql/node.js';
import { Operation } from '../src/operations/operation.entity.js';
import { RiskLevel } from '../src/operations/types.js';
import { Assistant } from '../src/assistants/assistant.entity.js';
import { UsageRollup } from '../src/usage/rollup.js';
import { Workspace } from '../src/workspaces/workspace.entity.js';
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
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
  startServiceProcess,
  type BenchApp,
} from './support.js';

const CALLS = 1_000_000;
const TURNS = 20_000;
const DAY = 86_400_000;
const GOAL_MS = 100;
const RUNS = 30;

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

/** One workspace with 2 assistants, 20 tools and `CALLS` calls over the 30 days before now (raw SQL). */
export async function seed(
  app: BenchApp,
): Promise<{ ws: Workspace; from: number; to: number; generatedMs: number }> {
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
  // Every turn declares the same (empty) list, stored once.
  await sql.execute(
    `insert into declared_tool_list (workspace_id, digest, tools, created_at)
       values (?, encode(sha256('[]'), 'hex'), '[]', now())`,
    [ws.id],
  );
  await sql.execute(
    `insert into turn (id, workspace_id, assistant_id, conversation_id, started_at, declared_tools_digest, call_seq)
       select (lpad(to_hex(?::bigint + i), 12, '0') || lpad(to_hex(i), 20, '0'))::uuid, ?, (?::uuid[])[1 + i % 2], 'c' || i,
              to_timestamp((?::bigint + i) / 1000.0), encode(sha256('[]'), 'hex'), 0
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
  return { ws, from, to, generatedMs: performance.now() - t0 };
}

/** The roll-up timers of both services stay still: the bench rolls up once, and times it. */
const STILL = { USAGE_ROLLUP_EVERY_MS: String(24 * 3_600_000) };

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
  const db = await benchDatabase();
  const app = await startBenchApp(db.url, STILL);
  let service: Awaited<ReturnType<typeof startServiceProcess>> | null = null;
  let client: ReturnType<typeof graphqlClient> | null = null;
  const backends = await pgBackends(db.url);
  try {
    const admin = await app.token(Role.ADMIN);
    const { ws, from, to, generatedMs } = await seed(app);
    const sql = app.app.services.orm.em.getConnection();
    // History begins at the first call, as the usage migration records for a database with history.
    await sql.execute(`update usage_rollup set hours_until = ?, days_until = ?`, [
      new Date(from).toISOString(),
      new Date(from).toISOString(),
    ]);
    const rollup = new UsageRollup(app.app.services.orm, app.app.services.logger, {
      everyMs: 60_000,
      settleMs: 20 * 60_000,
    });
    const pgBefore = await backends.read();
    const t1 = performance.now();
    const hours = await rollup.runOnce();
    const rollupMs = performance.now() - t1;
    const rollupPgMs = cpuBetween(pgBefore, await backends.read());
    await sql.execute(`analyze usage_hour`);
    await sql.execute(`analyze usage_day`);
    console.log(
      `${CALLS} calls over 30 days generated in ${fmt(generatedMs / 1000, 1)} s (load avg ${loadavg()[0]!.toFixed(1)})`,
    );
    console.log(
      `roll-up of ${hours} hours (all ${CALLS} calls but the unsettled tail): ${fmt(rollupMs / 1000, 1)} s wall, ${fmt(rollupPgMs / 1000, 1)} s PostgreSQL CPU`,
    );

    const profileDir = process.env.BENCH_CPU_PROF;
    service = await startServiceProcess(db.url, {
      compiled,
      env: STILL,
      nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    });
    client = graphqlClient(service.url);
    const variables = {
      w: toGlobalId('Workspace', ws.id),
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
    };
    type Answer = { workspace: { usage: { total: { calls: number }; series: { points: unknown[] }[] } } };
    const gql = client.gql;
    const ask = () => gql<Answer>(QUERY, variables, admin);
    const answer = await ask();
    const points = answer.workspace.usage.series.reduce((n, s) => n + s.points.length, 0);
    if (answer.workspace.usage.total.calls !== CALLS) {
      throw new Error(`usage counted ${answer.workspace.usage.total.calls} calls, expected ${CALLS}`);
    }
    // The same question in this process, to count its statements (warm: the marks are kept).
    await app.gql(QUERY, variables, admin);
    app.queries.length = 0;
    await app.gql(QUERY, variables, admin);
    const statements = app.queries.length;
    const usageSql = app.queries.find((q) => q.includes('turn_call'));

    await load(ask, 5, 1);
    const cpuBefore = processCpuMs(service.pid);
    const pgAskBefore = await backends.read();
    const api = await load(ask, RUNS, 1);
    const serviceCpu = (processCpuMs(service.pid) - cpuBefore) / RUNS;
    const pgCpu = cpuBetween(pgAskBefore, await backends.read()) / RUNS;
    const apiP50 = percentile(api.latencies, 50);
    const apiP95 = percentile(api.latencies, 95);

    const raw = await load(
      () => sql.execute(BASELINE, [ws.id, new Date(from).toISOString(), new Date(to).toISOString()]),
      3,
      1,
    );
    const rawP50 = percentile(raw.latencies, 50);
    console.log(`raw SQL over turn_call (baseline, same run): p50 ${fmt(rawP50)} ms`);
    console.log(
      `usage through GraphQL (30 days, per tool, per day: ${points} points), service ${compiled ? 'compiled' : 'through tsx'} in its own process: ` +
        `p50 ${fmt(apiP50)} ms, p95 ${fmt(apiP95)} ms over ${RUNS} runs; ${statements} SQL statements per question (with the scoped workspace lookup); ` +
        `CPU per question: service ${fmt(serviceCpu, 1)} ms, PostgreSQL ${fmt(pgCpu, 1)} ms; ${fmt(rawP50 / apiP50, 1)}× faster than the baseline (load avg ${loadavg()[0]!.toFixed(1)})`,
    );
    console.log(`goal p50 < ${GOAL_MS} ms: ${apiP50 < GOAL_MS ? 'MET' : 'MISSED'}`);
    if (usageSql && process.argv.includes('--explain')) {
      const plan = await sql.execute<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${usageSql}`);
      console.log(plan.map((r) => r['QUERY PLAN']).join('\n'));
    }
  } finally {
    await client?.close();
    await service?.stop();
    await backends.close();
    await app.stop();
    await db.cleanup();
  }
}
