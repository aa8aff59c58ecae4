/**
 * The zero-setup default: `npm start` with no DATABASE_URL boots embedded PostgreSQL from
 * nothing, prints an admin token, serves /graphql, keeps its data across restarts, and stops
 * cleanly on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedEnv, embeddedState, startService, stopService, viewer } from '../support/service-process.js';

let dataDir = '';
const root = new URL('../..', import.meta.url).pathname;

async function start(): Promise<Started> {
  const s = await startService(dataDir);
  return { child: s.child, url: s.url, stdout: s.output };
}

interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
}

/** `npm run token -- …` against the same DATA_DIR; returns the printed token. */
async function mintWithScript(args: string[]): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/token.ts', ...args], {
    cwd: root,
    env: embeddedEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`token script failed (${code}): ${out}`);
  return out.trim().split('\n').at(-1)!.trim();
}

async function stop(s: Started): Promise<number | null> {
  return stopService({ child: s.child, url: s.url, output: s.stdout });
}

/** The roles the running service's connections log in as, read as the cluster's owner. */
async function serviceRoles(): Promise<{ usename: string; rolsuper: boolean }[]> {
  const state = await embeddedState(dataDir);
  const client = new pg.Client({
    connectionString: `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/connected_tools`,
  });
  await client.connect();
  try {
    const { rows } = await client.query<{ usename: string; rolsuper: boolean }>(
      `select distinct a.usename, r.rolsuper from pg_stat_activity a join pg_roles r on r.rolname = a.usename
       where a.application_name like 'connected-tools:%'`,
    );
    return rows;
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('npm start on the embedded default', () => {
  it(
    'should boot from nothing, print a working admin token, survive a restart and stop cleanly',
    { timeout: 120_000 },
    async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'ct-smoke-'));
      const first = await start();
      const printed = /First start: an admin token was created[^\n]*\n\n\s+(ctk_[A-Za-z0-9_-]+)/.exec(
        first.stdout(),
      );
      expect(printed).not.toBeNull();
      const token = printed![1]!;
      expect((await readFile(join(dataDir, 'admin-token'), 'utf8')).trim()).toBe(token);
      expect(await viewer(first.url, token)).toEqual({
        data: { viewer: { role: 'ADMIN', label: 'first admin' } },
      });
      // The service runs as a role that is no superuser (and so cannot switch the ledger's triggers off).
      expect(await serviceRoles()).toEqual([{ usename: 'connected_tools_service', rolsuper: false }]);
      expect(first.stdout()).not.toContain('append-only ledger');
      expect(first.stdout()).not.toContain(
        (
          JSON.parse(await readFile(join(dataDir, 'embedded-postgres.json'), 'utf8')) as {
            servicePassword: string;
          }
        ).servicePassword,
      );
      // `npm run token` while the server runs shares its embedded cluster instead of failing on it.
      const minted = await mintWithScript(['--role', 'operator', '--label', 'second person']);
      expect(minted).toMatch(/^ctk_/);
      expect(await viewer(first.url, minted)).toEqual({
        data: { viewer: { role: 'OPERATOR', label: 'second person' } },
      });
      expect(await stop(first)).toBe(0);

      const second = await start();
      expect(second.stdout()).not.toContain('First start');
      expect(await viewer(second.url, token)).toEqual({
        data: { viewer: { role: 'ADMIN', label: 'first admin' } },
      });
      expect(await stop(second)).toBe(0);
      // The token never reaches a log line.
      const logLines = second
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      expect(logLines.join('\n')).not.toContain(token);
    },
  );
});
