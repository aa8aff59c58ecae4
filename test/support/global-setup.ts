/**
 * Integration tests get a fresh database per run: on the server DATABASE_URL points at, or on an
 * embedded PostgreSQL started here when it is unset. It is migrated once and dropped at the end.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { migrate, openOrm } from '../../src/db/orm.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated database for this run. */
    databaseUrl: string;
    /** A URL on the same server with rights to create databases (for tests that need an empty one). */
    adminDatabaseUrl: string;
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let embedded: EmbeddedPostgres | null = null;
  let dataDir: string | null = null;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'ct-test-pg-'));
    embedded = await startEmbeddedPostgres(dataDir);
    adminUrl = embedded.url;
  }
  const name = `ct_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, name);
  const orm = await openOrm({ databaseUrl });
  await migrate(orm);
  await orm.close();
  project.provide('databaseUrl', databaseUrl);
  project.provide('adminDatabaseUrl', adminUrl);

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    // Databases made by createEmptyDatabase() in tests.
    const others = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname LIKE $1',
      [`${name}_%`],
    );
    for (const row of others.rows) await client.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
    await client.end();
    await embedded?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  };
}
