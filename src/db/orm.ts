import 'reflect-metadata';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import { defineConfig, MikroORM, type Options } from '@mikro-orm/postgresql';
import { missingDatabaseLine } from '../start-errors.js';
import { ENTITIES } from './entities.js';
import { MIGRATIONS } from './migrations.js';

export interface OrmOptions {
  databaseUrl: string;
  /** Called with each SQL statement; used by tests and benchmarks to count statements. */
  onQuery?: (sql: string) => void;
  poolMax?: number;
}

export function ormConfig(options: OrmOptions): Options {
  return defineConfig({
    clientUrl: options.databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    migrations: {
      migrationsList: MIGRATIONS,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    pool: { min: 0, max: options.poolMax ?? 10 },
    // MikroORM's own query logger formats every statement with its parameters: too slow, and it
    // would print secrets. Statements are counted from knex's 'query' event instead (openOrm).
    debug: false,
    forceUtcTimezone: true,
    ensureDatabase: false,
    allowGlobalContext: false,
  });
}

export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(options));
  const onQuery = options.onQuery;
  if (onQuery) {
    orm.em
      .getConnection()
      .getKnex()
      .on('query', (q: { sql: string }) => onQuery(q.sql));
  }
  return orm;
}

/**
 * The database a URL names is not on its server. The service never creates one: MikroORM's
 * Migrator would (it creates a missing database before migrating, whatever `ensureDatabase` says),
 * so a typo in DATABASE_URL would silently start on a fresh, empty database.
 */
export class MissingDatabaseError extends Error {
  readonly code = '3D000';
  constructor(databaseUrl: string, setting: string) {
    super(missingDatabaseLine(databaseUrl, setting));
    this.name = 'MissingDatabaseError';
  }
}

function isMissingDatabase(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '3D000';
}

/** Connects once to `databaseUrl`; a missing database throws MissingDatabaseError naming `setting`. */
export async function requireDatabase(databaseUrl: string, setting: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
  } catch (err) {
    throw isMissingDatabase(err) ? new MissingDatabaseError(databaseUrl, setting) : err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Applies pending migrations; returns the names applied. Refuses a database that does not exist. */
export async function migrate(orm: MikroORM, setting = 'DATABASE_URL'): Promise<string[]> {
  await orm.em
    .getConnection()
    .execute('select 1')
    .catch((err: unknown) => {
      throw isMissingDatabase(err)
        ? new MissingDatabaseError(orm.config.get('clientUrl') ?? '', setting)
        : err;
    });
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}

export async function pendingMigrations(orm: MikroORM): Promise<number> {
  return (await orm.getMigrator().getPendingMigrations()).length;
}

/** The role a URL logs in as (a URL may leave the user to the environment). */
export async function currentUser(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ user: string }>('select current_user as "user"');
    return rows[0]!.user;
  } finally {
    await client.end();
  }
}
