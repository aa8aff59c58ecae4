/**
 * Shared bench plumbing: the service on a real database (DATABASE_URL, or embedded), a peer MCP
 * server in a child process (so its CPU does not blur ours), and small statistics helpers.
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';
import { startApp, type App } from '../src/app.js';
import { type Role } from '../src/auth/api-token.entity.js';
import { mintToken } from '../src/auth/auth.service.js';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.js';
import { createLogger } from '../src/logger.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export const fmt = (n: number, digits = 2) => n.toFixed(digits);

/** A database for the bench: a fresh one on DATABASE_URL's server, or an embedded server. */
export async function benchDatabase(): Promise<{ url: string; cleanup: () => Promise<void> }> {
  let embedded: EmbeddedPostgres | null = null;
  let dir: string | null = null;
  let admin = process.env.DATABASE_URL;
  if (!admin) {
    dir = await mkdtemp(join(tmpdir(), 'ct-bench-pg-'));
    embedded = await startEmbeddedPostgres(dir);
    admin = embedded.url;
  }
  const name = `ct_bench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    cleanup: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      await embedded?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface BenchApp {
  app: App;
  queries: string[];
  gql: Gql;
  token(role: Role, workspaceId?: string | null): Promise<string>;
  stop(): Promise<void>;
}

export type Gql = <T = Record<string, unknown>>(
  query: string,
  variables: Record<string, unknown>,
  token: string,
) => Promise<T>;

/** A keep-alive GraphQL client (64 connections) for a service URL; errors throw. */
export function graphqlClient(endpoint: string): { gql: Gql; close: () => Promise<void> } {
  const url = new URL(endpoint);
  const pool = new Pool(url.origin, { connections: 64, pipelining: 1 });
  return {
    gql: async <T>(query: string, variables: Record<string, unknown>, token: string): Promise<T> => {
      const res = await pool.request({
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.body.json()) as { data?: T; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data!;
    },
    close: () => pool.close(),
  };
}

/** The service in this process (`env`: more configuration, e.g. a roll-up that stays still). */
export async function startBenchApp(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<BenchApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ct-bench-app-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    PORT: '0',
    DATA_DIR: dataDir,
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    ...env,
  });
  const queries: string[] = [];
  const app = await startApp(config, createLogger('silent'), {
    onQuery: (q) => queries.push(q),
    bootstrapAdmin: false,
  });
  const client = graphqlClient(app.http.url);
  return {
    app,
    queries,
    gql: client.gql,
    token: async (role, workspaceId = null) =>
      (await mintToken(app.services.orm.em.fork(), { role, workspaceId })).token,
    stop: async () => {
      await client.close();
      await app.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A child process that prints its URL on its first stdout line; stopped with SIGTERM. */
async function startUrlChild(
  args: string[],
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(out.slice(0, nl).trim());
    });
    child.once('exit', (code) => reject(new Error(`child ${args.join(' ')} exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * An SDK MCP server (JSON answers; stateless unless `stateful`) with `tools` read tools, in a child
 * process. `pid`: the child's, for its CPU.
 */
export async function startPeerProcess(
  tools: number,
  options: { stateful?: boolean } = {},
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const script = `
    const { startSdkServer } = await import('./test/support/mcp-servers.ts');
    const tools = Array.from({ length: ${tools} }, (_, i) => ({ name: 'tool_' + i, description: 'Tool number ' + i, annotations: { readOnlyHint: true } }));
    const s = await startSdkServer({ stateful: ${options.stateful === true}, json: true, record: false, tools });
    process.stdout.write(s.url + '\\n');
    process.on('SIGTERM', () => { void s.close().then(() => process.exit(0)); });`;
  return startUrlChild(['--import', 'tsx', '--input-type=module', '-e', script]);
}

/**
 * A raw MCP peer (bench/raw-peer.ts: `node:http` and JSON-RPC, no SDK) with `tools` tools, every
 * tenth a WRITE named `write_N`, in a child process.
 */
export async function startRawPeerProcess(
  tools: number,
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  return startUrlChild(['--import', 'tsx', join(root, 'bench', 'raw-peer.ts'), String(tools)]);
}

/**
 * The service as `npm start` runs it (NODE_ENV=production, info logging to a discarded stdout), in
 * its own process so that its CPU can be read apart from the load generator's. `compiled`: the
 * built JavaScript (`npm run build`), else the TypeScript through tsx.
 */
export async function startServiceProcess(
  databaseUrl: string,
  options: { compiled: boolean; nodeArgs?: string[]; env?: Record<string, string> },
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'ct-bench-svc-'));
  const entry = [
    ...(options.nodeArgs ?? []),
    ...(options.compiled
      ? [join(root, 'dist', 'src', 'main.js')]
      : ['--import', 'tsx', join(root, 'src', 'main.ts')]),
  ];
  // Its stdout is its log, discarded as a log collector would take it; the URL is known in advance.
  const child = spawn(process.execPath, entry, {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      SECRET_KEY: randomBytes(32).toString('hex'),
      OUTBOUND_ALLOW_LOOPBACK: 'true',
      LOG_LEVEL: 'info',
      ...options.env,
    },
  });
  let exited = false;
  const exit = new Promise((r) => child.once('exit', r)).then(() => (exited = true));
  const url = `http://127.0.0.1:${port}/graphql`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (exited || Date.now() > deadline) throw new Error('the service process did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      if (!exited) child.kill('SIGTERM');
      await exit;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** CPU time (user + system, ms) a process has used so far, from /proc (0 once it has gone). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * CPU used by the PostgreSQL backends serving one database (this machine's server only), for
 * before/after readings: `read()` returns ms per backend pid. Background processes (WAL writer,
 * checkpointer) are shared with other databases and left out.
 */
export async function pgBackends(databaseUrl: string): Promise<{
  read: () => Promise<Map<number, number>>;
  close: () => Promise<void>;
}> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const name = new URL(databaseUrl).pathname.slice(1);
  return {
    read: async () => {
      const { rows } = await client.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [name],
      );
      return new Map(rows.map((r) => [r.pid, processCpuMs(r.pid)]));
    },
    close: () => client.end(),
  };
}

/** CPU ms used between two `pgBackends().read()` results (new backends count from zero). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/** Runs `fn` `total` times with `concurrency` workers; returns per-call latencies (ms) and wall time. */
export async function load(
  fn: () => Promise<unknown>,
  total: number,
  concurrency: number,
): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const t0 = performance.now();
        await fn();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

/**
 * An MCP peer listing the tools in the JSON file `toolsFile` (`{ name, description, inputSchema }[]`)
 * exactly as written (test/support/hard-schema-server.ts), every one a READ, in a child process.
 */
export async function startListedPeerProcess(
  toolsFile: string,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const script = `
    const { readFileSync } = await import('node:fs');
    const { startHardSchemaServer } = await import('./test/support/hard-schema-server.ts');
    const tools = JSON.parse(readFileSync(${JSON.stringify(toolsFile)}, 'utf8')).map((t) => ({ ...t, example: {}, cases: [] }));
    const s = await startHardSchemaServer({ tools });
    process.stdout.write(s.url + '\\n');
    process.on('SIGTERM', () => { void s.close().then(() => process.exit(0)); });`;
  return startUrlChild(['--import', 'tsx', '--input-type=module', '-e', script]);
}
