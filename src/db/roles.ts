/**
 * The service's database role (DESIGN.md rule 14, docs/ledger.md, "Two database roles").
 *
 * Migrations run as the owner of the tables; the service runs as a role that owns nothing, is not a
 * superuser, and may only INSERT and SELECT the ledger: it cannot switch the append-only triggers
 * off (`ALTER TABLE … DISABLE TRIGGER` needs ownership, `session_replication_role` a superuser), nor
 * UPDATE, DELETE or TRUNCATE a ledger row.
 *
 * The grants are not written in each migration (easy to forget): after every migration step, the
 * owner runs `grantServiceRole`, which grants DML on *every* table of the schema, then takes
 * UPDATE, DELETE and TRUNCATE back from the append-only tables. A table is append-only when it is
 * listed in `APPEND_ONLY_TABLES` or carries a trigger whose function is named `…append_only`, so
 * a new append-only table is covered by writing its trigger the way the ledger's are written.
 *
 * This module has the pure statement builders (unit-tested) and the few I/O helpers around them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The service's role on the embedded default. */
export const EMBEDDED_SERVICE_ROLE = 'connected_tools_service';

/** Tables the service may only INSERT into and SELECT from. */
export const APPEND_ONLY_TABLES = ['ledger_entry', 'ledger_outcome'] as const;

/**
 * Sequences the service moves itself (`setval`, which needs UPDATE): only these; every other
 * sequence it may only use.
 */
export const WRITABLE_SEQUENCES = ['turn_event_watch_until'] as const;

/** The Migrator's bookkeeping: the service reads it (readiness), only the owner writes it. */
export const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/** A PostgreSQL identifier, quoted. */
export function quoteIdent(name: string): string {
  if (name === '' || name.includes('\u0000')) throw new TypeError('not a valid SQL identifier');
  return `"${name.replaceAll('"', '""')}"`;
}

/** A PostgreSQL string literal (standard_conforming_strings is on since PostgreSQL 9.1). */
export function quoteLiteral(value: string): string {
  if (value.includes('\u0000')) throw new TypeError('a SQL literal cannot hold NUL');
  return `'${value.replaceAll("'", "''")}'`;
}

/** The tables the catalog marks append-only (an `…append_only` trigger function), as SQL. */
export const APPEND_ONLY_BY_TRIGGER_SQL = `
select distinct c.relname as name
from pg_trigger t
join pg_class c on c.oid = t.tgrelid
join pg_namespace n on n.oid = c.relnamespace
join pg_proc p on p.oid = t.tgfoid
where not t.tgisinternal and n.nspname = current_schema() and p.proname like '%append\\_only'`;

/**
 * What the owner runs to give `role` exactly what the service needs, in order. `appendOnly` are
 * the append-only tables that exist (the constant list and the catalog's).
 */
export function serviceGrantStatements(
  role: string,
  appendOnly: readonly string[],
  writableSequences: readonly string[] = [],
): string[] {
  const r = quoteIdent(role);
  const statements = [
    `grant usage on schema public to ${r}`,
    // Start from nothing, so a privilege granted by hand (or by an older version) does not linger.
    `revoke all on all tables in schema public from ${r}`,
    `revoke all on all sequences in schema public from ${r}`,
    `grant select, insert, update, delete on all tables in schema public to ${r}`,
    `grant usage, select on all sequences in schema public to ${r}`,
    `revoke insert, update, delete on ${quoteIdent(MIGRATIONS_TABLE)} from ${r}`,
  ];
  const sequences = [...new Set(writableSequences)].sort();
  if (sequences.length > 0)
    statements.push(`grant update on sequence ${sequences.map(quoteIdent).join(', ')} to ${r}`);
  const tables = [...new Set(appendOnly)].sort();
  if (tables.length > 0) {
    const list = tables.map(quoteIdent).join(', ');
    statements.push(`revoke update, delete, truncate, references, trigger on ${list} from ${r}, public`);
  }
  return statements;
}

/** Creates (or brings back in line) a login role that is nothing but a login: no superuser, no ownership. */
export function ensureRoleStatements(role: string, password: string, exists: boolean): string {
  const attributes = 'login nosuperuser nocreatedb nocreaterole noinherit noreplication nobypassrls';
  return `${exists ? 'alter' : 'create'} role ${quoteIdent(role)} ${attributes} password ${quoteLiteral(password)}`;
}

/** A password for a generated role (URL-safe, 24 characters). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

/** The owner's side: grants `role` the service's privileges, in one transaction. */
export async function grantServiceRole(ownerUrl: string, role: string): Promise<void> {
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    await client.query('begin');
    const found = await client.query<{ name: string }>(APPEND_ONLY_BY_TRIGGER_SQL);
    /** Which of `names` exist in the schema as relations of `kind` (pg_class.relkind). */
    const existing = async (kind: 'r' | 'S', names: readonly string[]) =>
      (
        await client.query<{ name: string }>(
          'select relname as name from pg_class where relkind = $1 and relnamespace = current_schema()::text::regnamespace and relname = any($2)',
          [kind, [...names]],
        )
      ).rows.map((row) => row.name);
    const tables = [...found.rows.map((row) => row.name), ...(await existing('r', APPEND_ONLY_TABLES))];
    const sequences = await existing('S', WRITABLE_SEQUENCES);
    for (const sql of serviceGrantStatements(role, tables, sequences)) await client.query(sql);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

/**
 * On a cluster we own (the embedded default): creates the service's login role, or resets its
 * attributes and password to the ones kept in the data folder. Safe to run concurrently.
 */
export async function ensureLoginRole(ownerUrl: string, role: string, password: string): Promise<void> {
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_roles where rolname = $1', [role]);
    try {
      await client.query(ensureRoleStatements(role, password, (found.rowCount ?? 0) > 0));
    } catch (err) {
      // Another process created it between our look and our CREATE: bring it in line instead.
      if ((err as { code?: string }).code !== '42710') throw err;
      await client.query(ensureRoleStatements(role, password, true));
    }
  } finally {
    await client.end();
  }
}

/** What the service's own connection may do that it should not (each makes the ledger rewritable). */
export interface RoleProblems {
  role: string;
  superuser: boolean;
  /** Owns (or is a member of the owner of) a ledger table. */
  ownsLedger: boolean;
  /** Holds UPDATE, DELETE or TRUNCATE on a ledger table. */
  canRewriteLedger: boolean;
}

export const ROLE_PROBLEMS_SQL = `
select current_user as role,
       (select rolsuper from pg_roles where rolname = current_user) as superuser,
       bool_or(pg_has_role(current_user, c.relowner, 'MEMBER')) as "ownsLedger",
       bool_or(has_table_privilege(c.oid, 'UPDATE') or has_table_privilege(c.oid, 'DELETE')
               or has_table_privilege(c.oid, 'TRUNCATE')) as "canRewriteLedger"
from pg_class c
where c.relnamespace = current_schema()::text::regnamespace and c.relkind = 'r'
  and c.relname in (${APPEND_ONLY_TABLES.map(quoteLiteral).join(', ')})`;

/** The warning to log for `problems`, or null when the role is as it should be. Never names a secret. */
export function roleWarning(problems: RoleProblems): string | null {
  const what: string[] = [];
  if (problems.superuser) what.push('a superuser');
  if (problems.ownsLedger) what.push("the ledger tables' owner");
  else if (problems.canRewriteLedger) what.push('a role with UPDATE, DELETE or TRUNCATE on the ledger');
  if (what.length === 0) return null;
  return (
    `the service connects to the database as ${what.join(' and ')} (role ${JSON.stringify(problems.role)}): ` +
    'it could switch off or bypass the append-only ledger. Run it as a role with only INSERT and SELECT on ' +
    'the ledger and give the owner to MIGRATION_DATABASE_URL (docs/ledger.md, "Two database roles").'
  );
}
