/**
 * Shared bench plumbing: the service on a real database (DATABASE_URL, or embedded), a peer MCP
 * server in a child process (so its CPU does not blur ours), and small statistics helpers.
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
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
  gql<T = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown>,
    token: string,
  ): Promise<T>;
  token(role: Role, workspaceId?: string | null): Promise<string>;
  stop(): Promise<void>;
}

export async function startBenchApp(databaseUrl: string): Promise<BenchApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ct-bench-app-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    PORT: '0',
    DATA_DIR: dataDir,
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
  });
  const queries: string[] = [];
  const app = await startApp(config, createLogger('silent'), {
    onQuery: (q) => queries.push(q),
    bootstrapAdmin: false,
  });
  const url = new URL(app.http.url);
  const pool = new Pool(url.origin, { connections: 64, pipelining: 1 });
  return {
    app,
    queries,
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
    token: async (role, workspaceId = null) =>
      (await mintToken(app.services.orm.em.fork(), { role, workspaceId })).token,
    stop: async () => {
      await pool.close();
      await app.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** An SDK MCP server (stateless, JSON answers) with `tools` read tools, in a child process. */
export async function startPeerProcess(tools: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const script = `
    const { startSdkServer } = await import('./test/support/mcp-servers.ts');
    const tools = Array.from({ length: ${tools} }, (_, i) => ({ name: 'tool_' + i, description: 'Tool number ' + i, annotations: { readOnlyHint: true } }));
    const s = await startSdkServer({ stateful: false, json: true, record: false, tools });
    process.stdout.write(s.url + '\\n');
    process.on('SIGTERM', () => { void s.close().then(() => process.exit(0)); });`;
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(out.slice(0, nl).trim());
    });
    child.once('exit', (code) => reject(new Error(`peer exited with ${code}`)));
  });
  return {
    url,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
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
