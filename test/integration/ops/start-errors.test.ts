/**
 * `npm start` failures a newcomer meets end with one line naming the setting to change: a port in
 * use (not graphql-ws's stack), an unreachable database (not the driver's stack, never its password).
 */
import { createServer, type Server } from 'node:net';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { MissingDatabaseError, migrate, openOrm } from '../../../src/db/orm.js';
import { createEmptyDatabase } from '../../support/app.js';
import { runScript } from '../../support/run-script.js';
import { tempDirForTest } from '../../support/temp.js';

const STACK = /\n\s+at [^\n]+:\d+:\d+/;

async function start(env: Record<string, string>) {
  const dataDir = await tempDirForTest('ct-start-');
  return runScript('src/main.ts', [], { LOG_LEVEL: 'warn', DATA_DIR: dataDir, ...env });
}

describe('npm start', { timeout: 60_000 }, () => {
  it('should say in one line that the port is in use, naming PORT', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { code, stderr } = await start({ DATABASE_URL: await createEmptyDatabase(), PORT: String(port) });
      expect(code).toBe(1);
      expect(stderr).toBe(
        `could not start: port ${port} on 127.0.0.1 is already in use (another copy of this service?): stop that process or set PORT to a free port (PORT=0 picks any)\n`,
      );
      expect(stderr).not.toMatch(STACK);
    } finally {
      blocker.close();
    }
  });

  it('should say in one line that the database cannot be reached, naming DATABASE_URL without its password', async () => {
    const { code, stderr } = await start({
      DATABASE_URL: 'postgres://app:pw-0193-secret@127.0.0.1:1/tools',
      PORT: '0',
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'could not start: cannot use the database at DATABASE_URL (127.0.0.1:1/tools): connection refused (is PostgreSQL running there?). Fix DATABASE_URL, or unset it to use the embedded PostgreSQL under DATA_DIR.\n',
    );
    expect(stderr).not.toContain('pw-0193-secret');
  });

  it('should refuse a mistyped database name with what to do, and create nothing', async () => {
    // Named like the run's databases, so the global teardown would drop it if it were created.
    const name = `${new URL(inject('databaseUrl')).pathname.slice(1)}_typo`;
    const url = new URL(inject('adminDatabaseUrl'));
    url.pathname = `/${name}`;
    const { code, stderr, stdout } = await start({ DATABASE_URL: url.toString(), PORT: '0' });
    expect(code).toBe(1);
    expect(stderr).toBe(
      `could not start: database "${name}" does not exist on ${url.hostname}:${url.port || '5432'}; create it (createdb ${name}) or fix DATABASE_URL\n`,
    );
    expect(stdout).not.toContain('admin token');
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      expect(found.rowCount).toBe(0);
    } finally {
      await admin.end();
    }
  });

  it('should not let the migrator create a missing database either', async () => {
    const name = `${new URL(inject('databaseUrl')).pathname.slice(1)}_typo_migrate`;
    const url = new URL(inject('adminDatabaseUrl'));
    url.pathname = `/${name}`;
    const orm = await openOrm({ databaseUrl: url.toString(), poolMax: 1 });
    try {
      await expect(migrate(orm)).rejects.toThrow(MissingDatabaseError);
    } finally {
      await orm.close();
    }
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    try {
      expect((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount).toBe(0);
    } finally {
      await admin.end();
    }
  });
});
