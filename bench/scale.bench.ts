/**
 * `npm run bench -- scale [--instances=1,2,3] [--calls=N]`: more than one machine (issue 15).
 *
 * 1, 2 and 3 service instances (each `npm start` as built, in its own process) on ONE PostgreSQL
 * database, all driven by this process against the raw MCP peer (bench/raw-peer.ts). Each instance
 * gets 32 concurrent callers, each in its own turn (as many conversations would be), READ calls,
 * every one recorded. Per instance count it prints calls/s, the CPU per call of each service
 * process, of PostgreSQL (the backends serving the bench database, from /proc), of the load
 * generator (this process) and of the peer, and what each call cost the database (from
 * `pg_stat_user_tables` / `pg_stat_user_indexes` / `pg_stat_database`: transactions, rows written,
 * index entries written, per call).
 *
 * Everything runs on this one machine: the load generator, the peer and PostgreSQL count against
 * the same cores as the instances, so the figures say where the CPU goes per call, and the
 * calls/s ceiling is this machine's, not the architecture's. The ceiling is read from the CPU
 * shares: whichever process spends most per call is where a bigger machine (or more of them)
 * would help first.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Role } from '../src/auth/api-token.entity.js';
import {
  benchDatabase,
  cpuBetween,
  fmt,
  graphqlClient,
  load,
  pgBackends,
  processCpuMs,
  root,
  startBenchApp,
  startRawPeerProcess,
  startServiceProcess,
} from './support.js';

const PER_INSTANCE_CONCURRENCY = 32;
const CALLS_PER_TURN = 25;

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i !== -1) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

/** Rows and index entries the hot tables took, and transactions committed, in the bench database. */
async function dbCounters(sql: pg.Client): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const tables = await sql.query<{ relname: string; ins: string; upd: string; hot: string; idx: string }>(
    `select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot,
            (select count(*) from pg_index i where i.indrelid = s.relid) as idx
     from pg_stat_user_tables s`,
  );
  let entries = 0;
  for (const t of tables.rows) {
    // Partitions count under their table's name.
    const name = t.relname.replace(/_(p\d{8}|default)$/, '');
    out.set(`${name} rows inserted`, (out.get(`${name} rows inserted`) ?? 0) + Number(t.ins));
    out.set(`${name} rows updated`, (out.get(`${name} rows updated`) ?? 0) + Number(t.upd));
    out.set(`${name} HOT updates`, (out.get(`${name} HOT updates`) ?? 0) + Number(t.hot));
    // Each insert and each update that is not HOT writes an entry into every index of the table.
    entries += (Number(t.ins) + Number(t.upd) - Number(t.hot)) * Number(t.idx);
  }
  out.set('index entries written', entries);
  const db = await sql.query<{ xact: string }>(
    `select xact_commit + xact_rollback as xact from pg_stat_database where datname = current_database()`,
  );
  out.set('transactions', Number(db.rows[0]!.xact));
  return out;
}

const settleStats = () => new Promise((r) => setTimeout(r, 11_000));

export async function run(): Promise<void> {
  const instanceCounts = (option('instances') ?? '1,2,3')
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  const callsPerInstance = Number(option('calls') ?? '1600');
  console.log('building the service (npm run build) so that it runs as npm start runs it…');
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root, stdio: 'inherit' },
  );
  console.log(
    `machine: ${cpus().length} cores, shared by the load generator (this process), the raw peer, PostgreSQL and the instances`,
  );
  const db = await benchDatabase();
  const peer = await startRawPeerProcess(30);
  const A = await startBenchApp(db.url);
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const backends = await pgBackends(db.url);
  const rows: string[] = [];
  try {
    const admin = await A.token(Role.ADMIN);
    const runtime = await A.token(Role.RUNTIME);
    const ws = await A.gql<{ createWorkspace: { workspace: { id: string } } }>(
      'mutation($n: String!) { createWorkspace(input: { name: $n }) { workspace { id } } }',
      { n: 'Scale' },
      admin,
    );
    const workspaceId = ws.createWorkspace.workspace.id;
    const asst = await A.gql<{ createAssistant: { assistant: { id: string } } }>(
      'mutation($w: ID!, $n: String!) { createAssistant(input: { workspaceId: $w, name: $n }) { assistant { id } } }',
      { w: workspaceId, n: 'Scale' },
      admin,
    );
    const assistantId = asst.createAssistant.assistant.id;
    const conn = await A.gql<{ createConnection: { connection: { id: string } } }>(
      'mutation($w: ID!, $n: String!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: $n, endpointUrl: $u }) { connection { id } } }',
      { w: workspaceId, n: 'Raw', u: peer.url },
      admin,
    );
    await A.gql(
      'mutation($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { changed } }',
      { a: assistantId, c: conn.createConnection.connection.id },
      admin,
    );

    for (const n of instanceCounts) {
      const services = await Promise.all(
        Array.from({ length: n }, () => startServiceProcess(db.url, { compiled: true })),
      );
      const clients = services.map((s) => graphqlClient(s.url));
      try {
        /** A caller bound to one instance: a new turn every CALLS_PER_TURN calls. */
        const caller = (i: number) => {
          const gql = clients[i % n]!.gql;
          let turnId: string | null = null;
          let left = 0;
          return {
            newTurn: async () => {
              const r = await gql<{ beginTurn: { turnId: string } }>(
                'mutation($a: ID!, $c: String!) { beginTurn(input: { assistantId: $a, conversationId: $c, toolSearch: { mode: OFF } }) { turnId } }',
                { a: assistantId, c: `scale-${i}` },
                runtime,
              );
              turnId = r.beginTurn.turnId;
              left = CALLS_PER_TURN;
            },
            call: async () => {
              const r = await gql<{ callTool: { ok: boolean; recorded: boolean } }>(
                'mutation($t: ID!) { callTool(input: { turnId: $t, name: "raw__tool_1", arguments: { q: "x" } }) { ok recorded } }',
                { t: turnId },
                runtime,
              );
              if (!r.callTool.ok || !r.callTool.recorded)
                throw new Error(`callTool: ${JSON.stringify(r.callTool)}`);
              left--;
            },
            get left() {
              return left;
            },
          };
        };
        const concurrency = PER_INSTANCE_CONCURRENCY * n;
        const callers = Array.from({ length: concurrency }, (_, i) => caller(i));
        await Promise.all(callers.map((c) => c.newTurn()));
        // Warm up every instance (JIT, pools, caches), then measure.
        let w = 0;
        await load(() => callers[w++ % concurrency]!.call(), 200 * n, concurrency);
        await Promise.all(callers.map((c) => c.newTurn()));
        // Turns are started outside the measured window, so the figures are callTool's alone.
        const total = callsPerInstance * n;
        const perCaller = Math.ceil(total / concurrency);
        // A backend reports its table counters at most once a second, and an idle one after 10 s.
        await settleStats();
        const db0 = await dbCounters(sql);
        const svc0 = services.map((s) => processCpuMs(s.pid));
        const pg0 = await backends.read();
        const me0 = process.cpuUsage();
        const started = performance.now();
        await Promise.all(
          callers.map(async (c) => {
            for (let k = 0; k < perCaller; k++) {
              if (c.left === 0) await c.newTurn();
              await c.call();
            }
          }),
        );
        const wallMs = performance.now() - started;
        const me = process.cpuUsage(me0);
        const calls = perCaller * concurrency;
        const turns = Math.ceil(perCaller / CALLS_PER_TURN - 1) * concurrency;
        const svcCpu = services.map((s, i) => processCpuMs(s.pid) - svc0[i]!);
        const pgCpu = cpuBetween(pg0, await backends.read());
        await settleStats();
        const db1 = await dbCounters(sql);
        const rate = (calls / wallMs) * 1000;
        const line =
          `${n} instance${n > 1 ? 's' : ' '}: ${fmt(rate, 0)} recorded calls/s (c=${concurrency}, ${calls} calls, ${turns} turns begun inside the window); ` +
          `CPU per call: ${svcCpu.map((c, i) => `service#${i + 1} ${fmt(c / (calls / n))}`).join(', ')} ms per call it served (all instances together ${fmt(svcCpu.reduce((a, b) => a + b, 0) / calls)} ms a call), ` +
          `PostgreSQL ${fmt(pgCpu / calls)} ms, load generator ${fmt((me.user + me.system) / 1000 / calls)} ms`;
        console.log(line);
        rows.push(line);
        const per = (k: string) => ((db1.get(k) ?? 0) - (db0.get(k) ?? 0)) / calls;
        const costs = [...db1.keys()].filter((k) => per(k) > 0.001).map((k) => `${k} ${fmt(per(k), 2)}`);
        console.log(`  per call in the database: ${costs.join('; ')}`);
      } finally {
        await Promise.all(clients.map((c) => c.close()));
        await Promise.all(services.map((s) => s.stop()));
      }
    }
    console.log('\nscale (one PostgreSQL, raw peer, READ calls, each caller in its own turn):');
    for (const r of rows) console.log(`  ${r}`);
  } finally {
    await backends.close();
    await sql.end();
    await A.stop();
    await peer.stop();
    await db.cleanup();
  }
}
