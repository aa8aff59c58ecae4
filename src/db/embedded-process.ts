/**
 * The embedded cluster's processes (src/db/embedded.ts starts it): running a binary to its end,
 * waiting for a postmaster to be ready, finding the one already running on a data folder, telling
 * whether its owner still lives, stopping an orphan, and the free-port probes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

const DEFAULT_START_TIMEOUT_MS = 60_000; // initdb + start on a cold, busy machine
const ORPHAN_STOP_TIMEOUT_MS = 30_000;

/** The process that started (and owns) the cluster, kept in DATA_DIR so a later start can tell an orphan. */
export const OWNER_FILE = 'embedded-owner.json';

export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolvePort(true)));
  });
}

export async function anyFreePort(): Promise<number> {
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

export function run(cmd: string, args: string[], ids: { uid: number; gid: number } | null): Promise<void> {
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's (the postgres user, when we are not root).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The parent pid of `pid` (Linux), or null where /proc cannot tell. */
async function parentPid(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ')' ends it.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * Whether the process that started the running postmaster `pid` still lives: its pid is recorded
 * in DATA_DIR, and (where /proc tells) it is the postmaster's parent. Otherwise the cluster is an
 * orphan, left by a service that was killed.
 */
export async function ownerIsAlive(dataDir: string, pid: number): Promise<boolean> {
  let owner: number;
  try {
    owner = (JSON.parse(await readFile(join(dataDir, OWNER_FILE), 'utf8')) as { pid: number }).pid;
  } catch {
    return false;
  }
  if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || !alive(owner)) return false;
  const parent = await parentPid(pid);
  return parent === null || parent === owner;
}

/** Stops an orphaned postmaster: a fast shutdown, then an immediate one if it lingers. */
export async function stopOrphan(pid: number): Promise<void> {
  const deadline = Date.now() + ORPHAN_STOP_TIMEOUT_MS;
  try {
    process.kill(pid, 'SIGINT');
  } catch (err) {
    throw new EmbeddedPostgresError(
      `an embedded PostgreSQL (pid ${pid}) left by a stopped service is running and could not be stopped: ${(err as Error).message}`,
    );
  }
  while (alive(pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // gone meanwhile
      }
      if (Date.now() > deadline + 5_000)
        throw new EmbeddedPostgresError(`the embedded PostgreSQL left running (pid ${pid}) did not stop`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A postmaster.pid whose pid now belongs to another program (after a reboot) would make postgres
 * refuse to start: remove it. A live postmaster, or a dead one, is left to postgres.
 */
export async function removeStaleLock(pgdata: string): Promise<void> {
  const lock = join(pgdata, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number((await readFile(lock, 'utf8')).split('\n')[0]);
  } catch {
    return;
  }
  // A dead pid is postgres's own business: it then checks the old shared memory (whose key is in
  // this file) for backends still running, so the file must stay.
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  let cmdline = '';
  try {
    cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return; // cannot tell: let postgres decide
  }
  if (!cmdline.includes('postgres')) await rm(lock, { force: true });
}

/** The pid and port of a live, listening postmaster on `pgdata` (from its postmaster.pid), or null. */
export async function runningPostmaster(pgdata: string): Promise<{ pid: number; port: number } | null> {
  let lines: string[];
  try {
    lines = (await readFile(join(pgdata, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  if (lines[1] !== undefined && lines[1] !== pgdata) return null;
  if (!alive(pid)) return null;
  return (await portIsFree(port)) ? null : { pid, port };
}

export function waitUntilReady(child: ChildProcess): Promise<void> {
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
