/**
 * The real service as a child process (`src/main.ts` via tsx) on the embedded default, for the
 * tests that start, kill and restart it on one DATA_DIR.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
}

export function embeddedEnv(dataDir: string): Record<string, string> {
  const env: Record<string, string> = { ...process.env } as Record<string, string>;
  delete env.DATABASE_URL;
  delete env.MIGRATION_DATABASE_URL;
  delete env.SECRET_KEY;
  return Object.assign(env, { DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'development', LOG_LEVEL: 'info' });
}

/** Starts the service on `dataDir` and resolves once it logs its 'listening' line. */
export async function startService(dataDir: string, timeoutMs = 90_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: embeddedEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no 'listening' line within ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const check = (): void => {
      const match = /"url":"(http:\/\/[^"]+)","msg":"listening"/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited early with ${code}:\n${out}`));
    });
  });
  return { child, url, output: () => out };
}

/** SIGTERM, and the exit code. */
export async function stopService(s: ServiceProcess): Promise<number | null> {
  if (s.child.exitCode !== null) return s.child.exitCode;
  const exited = new Promise<number | null>((resolve) => s.child.once('exit', (code) => resolve(code)));
  s.child.kill('SIGTERM');
  return exited;
}

export async function viewer(url: string, token: string): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ viewer { role label } }' }),
  });
  return res.json();
}

/** What DATA_DIR records of the embedded cluster (its secrets included: tests only). */
export async function embeddedState(
  dataDir: string,
): Promise<{ port: number; password: string; servicePassword: string; pgdata: string }> {
  return JSON.parse(await readFile(join(dataDir, 'embedded-postgres.json'), 'utf8')) as {
    port: number;
    password: string;
    servicePassword: string;
    pgdata: string;
  };
}

/** The pid in the cluster's postmaster.pid, or null. */
export async function postmasterPid(dataDir: string): Promise<number | null> {
  const { pgdata } = await embeddedState(dataDir);
  try {
    const pid = Number((await readFile(join(pgdata, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
